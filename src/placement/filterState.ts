import { zoneOf, type SlimNode } from '../cluster/objects.js';
import { misfitOf, nodeFit, NO_AFFINITY, UNTOLERATED, type NodeMisfit } from './nodeFit.js';
import type { WorkloadModel } from './model.js';
import { policyNamed, type PolicyName } from './policies/index.js';
import { clipReason, type Effects, type PlacementInput, type PolicyContext, type PolicyOutcome, type Rejection } from './policy.js';
import { passAll, rejectAll, type FilterVerdict } from './verdict.js';
import { podVolumes } from './volumes.js';

// The filter in PodTopologySpread's shape: what a decision needs is computed once per pod from
// the prepared input (preFilter: the pod's fit, its volumes, the policy's outcome, a zone rule's
// answer per zone), then the per-node filter reads that state and one node (filterNode).

/** Who a node's rejection is by and why, for one pod: computed once, read per node. */
export interface FilterState {
  input: PlacementInput;
  model: WorkloadModel;
  /** The policy that places the pod. */
  policy: PolicyName;
  /** The policy's outcome over the candidates (its rule per node or per zone, its effects, its subset or zone). */
  outcome: PolicyOutcome;
  effects: Effects;
  boundVolume: boolean;
  /** The pod's volumes constrain nodes: each node is checked against them. */
  checkVolumes: boolean;
  /** A node's first volume rejection. */
  volumeRejection(node: SlimNode): Rejection | undefined;
  /** The pod's own node selector, affinity and tolerations; undefined when every cached node fits. */
  misfit: PodMisfit | undefined;
  /** A zone-only rule answered per zone code of the cache (read by slot), when nothing else judges a node. */
  byZone: ZoneVerdicts | undefined;
  /** The policy's rule per node (or per zone, by the node's label). */
  admits: ((node: SlimNode) => Rejection | undefined) | undefined;
}

export type PodMisfit = (i: number, node: SlimNode) => Rejection | undefined;
export type ZoneVerdicts = ReturnType<typeof zoneVerdicts>;

// The node's name is the key it is reported under, so one reason serves every such node.
const NOT_CACHED: Rejection = { rule: 'cache', reason: "node not in zonekeeper's cache yet", unresolvable: false, unknownNames: true };

/**
 * The state of one pod's filter (docs/design.md#which-policy-places-a-pod), or the verdict when
 * no node needs judging: an unmanaged pod passes everything, a waiting one or one whose volumes
 * are missing waits on every node.
 */
export function preFilter(input: PlacementInput, model: WorkloadModel | undefined): { verdict: FilterVerdict } | { state: FilterState } {
  const { pod, snapshot, candidates } = input;
  if (!model) return { verdict: passAll(candidates, 'not managed: the pod has no controller owner') };
  if (model.policy === 'none') return { verdict: passAll(candidates, model.why, model) };
  if (model.policy === 'wait') return { verdict: rejectAll(candidates, { rule: 'cache', reason: model.why, unresolvable: false }, model, model.governs) };

  const volumes = podVolumes(pod, snapshot);
  if (volumes.missing.length > 0) {
    return { verdict: rejectAll(candidates, { rule: 'cache', reason: clipReason(volumes.missing.join('; ')), unresolvable: false }, model, model.policy) };
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
  const checkVolumes = volumes.constraints.length > 0;
  const { waitAll, admitsZone } = outcome;
  const admits = waitAll ? () => waitAll
    : outcome.admits ?? (admitsZone && ((node: SlimNode) => admitsZone.admits(zoneOf(node, admitsZone.topologyKey))));
  // A zone-only rule over the cache's nodes: asked once per zone, read by slot.
  const byZone = !checkVolumes && !waitAll && candidates.slots && admitsZone ? zoneVerdicts(snapshot, admitsZone) : undefined;
  const state = { input, model, policy: model.policy, outcome, effects, boundVolume: ctx.boundVolume, checkVolumes, volumeRejection, misfit, byZone, admits };
  return { state };
}

/**
 * One candidate (by its index) under the rule that decides it: the pod's own spec, then the
 * policy (which already places a pod where its bound volume is, when they disagree), then the
 * volumes; a volume's hard rejection goes before a policy's soft one (a quota), so preemption is
 * not tried in vain. Undefined: the node passes.
 */
export function filterNode(s: FilterState, i: number): Rejection | undefined {
  const { nodes, slots } = s.input.candidates;
  const node = nodes[i];
  if (!node) return NOT_CACHED;
  const { byZone } = s;
  let r = s.misfit?.(i, node) ?? (byZone && byZone.nodes[slots![i]!] === node ? byZone.of(byZone.codes[slots![i]!]!) : s.admits?.(node));
  if (s.checkVolumes && (r === undefined || !r.unresolvable)) r = s.volumeRejection(node) ?? r;
  return r;
}

/** A zone rule's verdict per zone code of the cache (-1: no zone label). */
function zoneVerdicts(snapshot: PlacementInput['snapshot'], rule: NonNullable<PolicyOutcome['admitsZone']>) {
  const { codes, zones, nodes } = snapshot.zoneCodes(rule.topologyKey);
  const verdicts = zones.map((z) => rule.admits(z));
  const unlabeled = rule.admits(undefined);
  return { codes, nodes, of: (code: number) => (code < 0 ? unlabeled : verdicts[code]) };
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
function podMisfit(input: PlacementInput): PodMisfit | undefined {
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
