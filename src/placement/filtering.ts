import { zoneOf, type NodeSelectorTerm, type SlimNode } from '../cluster/objects.js';
import { matchesTerm } from './nodeMatching.js';
import { misfitOf, needsKey, nodeFit, NO_AFFINITY, UNTOLERATED, type NodeMisfit } from './nodeFit.js';
import { podModel, type WorkloadModel } from './model.js';
import { policyNamed, type PolicyName } from './policies/index.js';
import { clipReason, type Candidates, type Effects, type PlacementInput, type PolicyContext, type PolicyOutcome, type Rejection } from './policy.js';
import type { FilterVerdict } from './verdict.js';
import { podVolumes } from './volumes.js';

// The node's name is the key it is reported under, so one reason serves every such node.
const NOT_CACHED: Rejection = { rule: 'cache', reason: "node not in zonekeeper's cache yet", unresolvable: false, unknownNames: true };

function passAll(candidates: Candidates, summary: string, model?: WorkloadModel): FilterVerdict {
  return {
    managed: false, policy: 'none', summary, workload: model?.ref, model,
    passed: candidates.names, passedUnknown: true, rejected: new Map(), effects: {},
  };
}

/** Every node waits for one reason; the pod is managed. */
export function rejectAll(candidates: Candidates, rejection: Rejection, model?: WorkloadModel, policy: PolicyName | 'none' = 'zone-pin'): FilterVerdict {
  return {
    managed: true, policy, summary: rejection.reason, workload: model?.ref, model,
    passed: [], rejected: new Map([[{ ...rejection, unknownNames: true }, [...candidates.names]]]), effects: {},
  };
}

/** A zone rule's verdict per zone code of the cache (-1: no zone label). */
function zoneVerdicts(snapshot: PlacementInput['snapshot'], rule: NonNullable<PolicyOutcome['admitsZone']>) {
  const { codes, zones, nodes } = snapshot.zoneCodes(rule.topologyKey);
  const verdicts = zones.map((z) => rule.admits(z));
  const unlabeled = rule.admits(undefined);
  return { codes, nodes, of: (code: number) => (code < 0 ? unlabeled : verdicts[code]) };
}

/** The model filter and prioritize place a pod by (built once per request). */
function modelOf(input: PlacementInput): WorkloadModel | undefined {
  return podModel(input.pod, input.snapshot, input.settings, { pendingFreezes: input.pendingFreezes, forPlacement: true });
}

/**
 * Filter (docs/design.md#which-policy-places-a-pod): volumes first (hard, they always win), then the zone pin or the
 * WorkloadSpread subset. The node set passed is what every applicable rule allows;
 * every rejected node carries the reason of the first rule that rejected it.
 */
export function filterNodes(input: PlacementInput, model: WorkloadModel | undefined = modelOf(input)): FilterVerdict {
  const { pod, snapshot, candidates } = input;
  if (!model) return passAll(candidates, 'not managed: the pod has no controller owner');
  if (model.policy === 'none') return passAll(candidates, model.why, model);
  if (model.policy === 'wait') return rejectAll(candidates, { rule: 'cache', reason: model.why, unresolvable: false }, model, model.governs);

  const volumes = podVolumes(pod, snapshot);
  if (volumes.missing.length > 0) {
    return rejectAll(candidates, { rule: 'cache', reason: clipReason(volumes.missing.join('; ')), unresolvable: false }, model, model.policy);
  }
  const volumeRejections = volumes.constraints.map((c): Rejection => ({ rule: 'volume', reason: c.describe, unresolvable: true }));
  const volumeRejection = (node: SlimNode): Rejection | undefined => {
    const i = volumes.constraints.findIndex((v) => !v.allows(node));
    return i < 0 ? undefined : volumeRejections[i];
  };
  const misfit = podMisfit(input);
  const usable = (i: number): SlimNode | undefined => {
    const node = candidates.nodes[i];
    return node && !misfit?.(i, node) && !volumeRejection(node) ? node : undefined;
  };
  const ctx: PolicyContext = {
    input, snapshot, boundVolume: volumes.constraints.some((v) => v.bound), volumes: volumes.constraints,
    // Only some policies ask, and they stop early. Methods, not getters (docs/performance.md#why-the-code-is-shaped-this-way).
    someFeasible: (test) => {
      for (let i = 0; i < candidates.nodes.length; i++) {
        const node = usable(i);
        if (node && test(node)) return true;
      }
      return false;
    },
    feasibleZones: (topologyKey, zones) => {
      const wanted = new Set(zones);
      const out = new Set<string>();
      for (let i = 0; i < candidates.nodes.length && out.size < wanted.size; i++) {
        const node = usable(i);
        const zone = node && zoneOf(node, topologyKey);
        if (zone !== undefined && wanted.has(zone)) out.add(zone);
      }
      return out;
    },
  };

  const outcome: PolicyOutcome = policyNamed(model.policy).filter(ctx, model);
  const parsed = model.preferences.parsed;
  const effects: Effects = parsed && !parsed.ok
    ? { ...outcome.effects, preferencesError: { workload: model.key, error: parsed.error } }
    : outcome.effects;

  let passed: string[] = [];
  const rejected = new Map<Rejection, string[]>();
  const checkVolumes = volumes.constraints.length > 0;
  const { waitAll, admitsZone } = outcome;
  const admits = outcome.admits ?? (admitsZone && ((node: SlimNode) => admitsZone.admits(zoneOf(node, admitsZone.topologyKey))));
  const { names: candidateNames, nodes, slots } = candidates;
  // A zone-only rule over the cache's nodes: asked once per zone, read by slot.
  const byZone = !checkVolumes && !waitAll && slots && admitsZone ? zoneVerdicts(snapshot, admitsZone) : undefined;
  // A decision written into the spec over a kept candidate set: answered per group of nodes alike, not per node.
  const groups = input.writesSpec && byZone && outcome.admitsZone ? nodeGroups(input, byZone, misfit, outcome.admitsZone.topologyKey) : undefined;
  if (groups) {
    for (const g of groups) {
      const r = g.misfit ?? byZone!.of(g.code);
      // The group's own list when it is alone (nothing writes to a verdict's lists), else a copy.
      if (!r) passed = passed.length === 0 ? g.names : passed.concat(g.names);
      else rejected.set(r, rejected.get(r)?.concat(g.names) ?? g.names);
    }
  }
  // Rejections come in few distinct objects (one per reason): remember the last one's list.
  let lastRejection: Rejection | undefined;
  let lastNames: string[] = [];
  for (let i = 0; !groups && i < candidateNames.length; i++) {
    const node = nodes[i];
    // Each node under the rule that decides it: the pod's own spec, then the policy (which
    // already places a pod where its bound volume is, when they disagree), then the volumes; a
    // volume's hard rejection goes before a policy's soft one (a quota), so preemption is not tried in vain.
    let r = !node ? NOT_CACHED
      : misfit?.(i, node) ?? (byZone?.nodes[slots![i]!] === node ? byZone.of(byZone.codes[slots![i]!]!) : waitAll ?? admits?.(node));
    if (checkVolumes && node && (r === undefined || !r.unresolvable)) r = volumeRejection(node) ?? r;
    if (!r) {
      passed.push(candidateNames[i]!);
      continue;
    }
    if (r !== lastRejection) {
      lastRejection = r;
      lastNames = rejected.get(r) ?? rejected.set(r, []).get(r)!;
    }
    lastNames.push(candidateNames[i]!);
  }
  let spread: readonly string[] = passed;
  // Spreading within a zone is the extender's: a decision written into the spec names a zone, not a node.
  if (input.settings.spreadNodes && !input.writesSpec && passed.length > 1) {
    spread = fewestOfWorkload(passed, model.podsPerNode(pod.uid), rejected);
    const preferred = outcome.subset?.subset.preferredNodeSelectorTerms ?? [];
    if (preferred.length > 0 && spread.length > 1) spread = mostPreferred(spread, preferred, snapshot, rejected);
  }
  return {
    managed: true, policy: model.policy, summary: outcome.summary, workload: model.ref, model,
    passed: spread, rejected, effects, subset: outcome.subset, zone: outcome.zone, retryAfterMs: outcome.retryAfterMs, boundVolume: ctx.boundVolume,
  };
}

/** Candidates alike under a zone-only rule: one zone code, one way (or none) of not fitting the pod. */
interface NodeGroup { code: number; misfit: Rejection | undefined; names: string[] }
/** Groups kept per candidate set: at most this many (pod needs × topology keys), then started over. */
const MAX_GROUPINGS = 256;

/**
 * The candidates grouped by zone code and misfit, kept in the candidates' memo; undefined when
 * they have none, or a candidate is not the cache's node (each is then judged on its own).
 */
function nodeGroups(input: PlacementInput, byZone: ReturnType<typeof zoneVerdicts>, misfit: ReturnType<typeof podMisfit>,
  topologyKey: string): readonly NodeGroup[] | undefined {
  const { candidates, pod } = input;
  const { memo, slots, nodes, names } = candidates;
  if (!memo || !slots) return undefined;
  const key = `groups\u0002${topologyKey}\u0002${needsKey({ selection: pod.selection, tolerations: pod.tolerations })}`;
  const kept = memo.get(key) as NodeGroup[] | null | undefined;
  if (kept !== undefined) return kept ?? undefined;
  const groups = new Map<string, NodeGroup>();
  let alike = true;
  for (let i = 0; i < names.length && alike; i++) {
    const node = nodes[i];
    const slot = slots[i]!;
    if (!node || slot < 0 || byZone.nodes[slot] !== node) {
      alike = false;
      break;
    }
    const m = misfit?.(i, node);
    const code = byZone.codes[slot]!;
    const id = `${code}\u0002${m?.rule ?? ''}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { code, misfit: m, names: [] }));
    g.names.push(names[i]!);
  }
  if (memo.size >= MAX_GROUPINGS) memo.clear();
  const out = alike ? [...groups.values()] : null;
  memo.set(key, out);
  return out ?? undefined;
}

// One object per reason: answers group rejected nodes by identity.
const AFFINITY_MISFIT: Rejection = { rule: 'node-affinity', reason: "node didn't match the pod's node selector or affinity", unresolvable: true };
const TAINT_MISFIT: Rejection = { rule: 'taint', reason: 'node has a taint the pod does not tolerate', unresolvable: true };

/** The rejection for a node that does not fit, by its code (nodeFit's bySlot) or misfit. */
function misfitRejection(m: NodeMisfit | number): Rejection | undefined {
  return m === 'affinity' || m === NO_AFFINITY ? AFFINITY_MISFIT : m === 'taint' || m === UNTOLERATED ? TAINT_MISFIT : undefined;
}

/**
 * The pod's own node selector, affinity and tolerations, as kube-scheduler's filters judge
 * them: a candidate the pod cannot use is never passed (docs/design.md#the-zones-a-workload-can-use).
 * Undefined when every cached node fits, the common case: nothing to check per node.
 */
function podMisfit(input: PlacementInput): ((i: number, node: SlimNode) => Rejection | undefined) | undefined {
  const { pod, snapshot, candidates } = input;
  const needs = { selection: pod.selection, tolerations: pod.tolerations };
  const fit = nodeFit(needs, snapshot);
  // Nodes without slots are the request's own objects (or explain's): each is judged as it is.
  if (fit.all && candidates.slots !== undefined) return undefined;
  const bySlot = snapshot.nodesBySlot();
  let misfit: ReturnType<typeof misfitOf> | undefined;
  return (i, node) => {
    const slot = candidates.slots?.[i] ?? -1;
    if (slot >= 0 && bySlot[slot] === node) return misfitRejection(fit.bySlot[slot]!);
    return misfitRejection((misfit ??= misfitOf(needs))(node));
  };
}

const MORE_OF_WORKLOAD: Rejection = { rule: 'node-spread', reason: "holds more of this workload's pods than other nodes the pod may use", unresolvable: false };
const LESS_PREFERRED: Rejection = { rule: 'node-spread', reason: "matches less of its subset's preferred terms than other nodes the pod may use", unresolvable: false };

/**
 * The passed nodes holding the fewest pods of the workload; the others are added to
 * `rejected`. kube-scheduler sends only nodes its own filters found feasible, so some always
 * remain: spreading within the zone this way spares it scoring (docs/design.md#spreading-within-a-zone).
 */
function fewestOfWorkload(passed: readonly string[], onNode: ReadonlyMap<string, number>, rejected: Map<Rejection, string[]>): readonly string[] {
  if (onNode.size === 0) return passed;
  const held = new Int32Array(passed.length);
  let least = Infinity, most = -Infinity;
  for (let i = 0; i < passed.length; i++) {
    const n = onNode.get(passed[i]!) ?? 0;
    held[i] = n;
    if (n < least) least = n;
    if (n > most) most = n;
  }
  if (least === most) return passed;
  const kept: string[] = [];
  const more: string[] = [];
  for (let i = 0; i < passed.length; i++) (held[i] === least ? kept : more).push(passed[i]!);
  rejected.set(MORE_OF_WORKLOAD, more);
  return kept;
}

/** Of nodes equally spread, those matching the most weight of a WorkloadSpread subset's preferred terms. */
function mostPreferred(
  names: readonly string[], preferred: readonly { weight: number; preference: NodeSelectorTerm }[],
  snapshot: PlacementInput['snapshot'], rejected: Map<Rejection, string[]>,
): readonly string[] {
  const weights = names.map((name) => {
    const node = snapshot.node(name);
    let w = 0;
    if (node) for (const p of preferred) if (matchesTerm(p.preference, node)) w += p.weight;
    return w;
  });
  const best = weights.reduce((a, b) => Math.max(a, b), 0);
  if (weights.every((w) => w === best)) return names;
  rejected.set(LESS_PREFERRED, names.filter((_, i) => weights[i] !== best));
  return names.filter((_, i) => weights[i] === best);
}
