import { pendingPod, slimNode, unshared } from '../cluster/convert.js';
import type { SlimPod } from '../cluster/objects.js';
import { gateDecision, schedulableNodes, volumeStillMoving, type AdmissionDecision, type GateDecision } from '../placement/zoneGate.js';
import { systemClock } from '../common/clock.js';
import type { WorkloadKind } from '../cluster/kinds.js';
import { pickPodsToRemove } from '../placement/downscale.js';
import { LAYOUT_PODS_PER_ANSWER, managedLayouts, workloadLayout, type WorkloadLayout } from '../placement/layout.js';
import type { WorkloadHealth } from '../placement/healthRecord.js';
import { candidatesNamed, clipReason, type Candidates } from '../placement/policy.js';
import { passedInOrder, scoreAllowed, scoreNodes } from '../placement/scoring.js';
import { rejectedCount, type FilterVerdict } from '../placement/verdict.js';
import { workloadKey } from '../placement/workload.js';
import { zonesShown } from '../placement/zones.js';
import { withoutPods } from '../placement/withoutPods.js';
import type { PinConflict } from '../decision/placementState.js';
import { decisionCore, type CandidateNodes, type Decided, type DecisionCoreDeps } from '../decision/core.js';
import { DecisionLog, summarizeRejections, type DecisionRecord } from '../decision/decisions.js';
import { maxCandidates, namesMode, type ExtenderArgs } from './wire/args.js';
import { encodeError, encodeFilterResult, encodePriorities, quotedNames } from './wire/encoding.js';
import type { AnsweredNames } from './wire/namesSection.js';
import { pickResult, type PickResult } from './wire/picker.js';
import { encodePreemptionResult, type MetaVictims, type PreemptionArgs } from './wire/preemption.js';
import type { RawObject } from './wire/validation.js';

export const NOT_SYNCED = 'zonekeeper: cluster cache not synced yet; the pod will be retried';
export const STALE = 'zonekeeper: cluster cache is stale (watches failing); the pod will be retried';

/** What the extender is made of: what the decision core is. */
export type ExtenderDeps = DecisionCoreDeps;

/** A workload's layout with the pin conflicts seen for it. */
export type LayoutWithConflicts = WorkloadLayout & { conflicts: PinConflict[] };

/** What server/ reaches the extender through: the verbs and the debug views. */
export interface ExtenderService {
  /** How many nodes one request may name: bounded by the cluster, not by the request. */
  maxCandidates(): number;
  /** The names of the filter answers a prioritize may come for (the request parser recognizes them). */
  answeredNames(): Iterable<AnsweredNames>;
  /** The ExtenderFilterResult as JSON text. */
  filter(args: ExtenderArgs): Promise<string>;
  /** The HostPriorityList as JSON text. */
  prioritize(args: ExtenderArgs): string;
  /** The ExtenderPreemptionResult as JSON text: the candidate nodes the pod may use. */
  preempt(args: PreemptionArgs): string;
  /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
  pickPodsToRemove(namespace: string, n: number, candidates: readonly string[]): PickResult | undefined;
  /** A dry-run filter of a cached pod against every cached node; undefined for a pod not cached. */
  explain(namespace: string, name: string): Explained | undefined;
  /** The last decisions about a pod (`namespace/name`). */
  decisionsFor(pod: string): DecisionRecord[];
  /** /debug/workloads: one cached workload's layout, or undefined. */
  workloadLayout(kind: WorkloadKind, namespace: string, name: string): LayoutWithConflicts | undefined;
  /** /debug/layouts: every managed workload (of one namespace), within the answer's budget. */
  layouts(namespace: string | undefined,
    healthOf?: (key: string) => WorkloadHealth | undefined): { layouts: LayoutWithConflicts[]; more: number; podsPerAnswer: number };
  /** Reservations held now. */
  reservationCount(): number;
}

/** A dry-run filter: the decision, why each node failed, and the zones the workload can use. */
export type Explained = DecisionRecord & {
  failed: Record<string, string>;
  /** The zone list; `unusable`: listed zones no node fits the pods in; `excluded`: the cluster's other zones the pods cannot use. */
  zones?: { list: string[]; unusable: string[]; excluded: string[] };
};

/**
 * The extender verbs over the cache: each request builds the pod's workload model once, asks
 * placement for a verdict, lets the placement state carry out its effects, and records the
 * decision.
 */
export function createExtender(deps: ExtenderDeps) {
  const { source, metrics, log, config } = deps;
  const clock = deps.clock ?? systemClock;
  const core = decisionCore({ ...deps, clock });
  const { state, settings } = core;
  const decisions = new DecisionLog(config.debug.decisionsKeptPods, config.debug.decisionsPerPod, config.debug.decisionsMaxBytes);

  /** The names a request sends, as sent. */
  function namesOf(args: ExtenderArgs): readonly string[] {
    return namesMode(args) ? args.NodeNames! : (args.Nodes?.items ?? []).map((raw) => raw.metadata.name);
  }

  /** The request's nodes: its Node objects, else the cache's (by slot, see NodeSlots.resolve). */
  function candidatesOf(args: ExtenderArgs, names: readonly string[]): Candidates {
    if (namesMode(args)) return candidatesNamed(names, source.snapshot);
    return { names, nodes: (args.Nodes?.items ?? []).map((raw) => slimNode(raw, unshared)) };
  }

  /** A request's nodes as the decision core takes them: looked up only if a policy places the pod. */
  const nodesOf = (args: ExtenderArgs, names = namesOf(args)): CandidateNodes => ({ names, resolve: () => candidatesOf(args, names) });
  const resolved = (candidates: Candidates): CandidateNodes => ({ names: candidates.names, resolve: () => candidates });

  /**
   * A decision to write into the pod's spec (the gate's patch, admission's): the verdict's, waiting
   * while its instance ID could not be claimed; an ID this process just gave the pod goes in the
   * same write as the zone it pins (a rollout's successor holds none yet).
   */
  function writtenDecision(x: Decided): GateDecision {
    if (x.idError !== undefined) return { kind: 'wait', why: x.idError };
    const g = gateDecision(x.verdict, x.input);
    return g.kind === 'zone' && x.givenId !== undefined ? { ...g, instanceId: x.givenId } : g;
  }

  // The Ready, schedulable nodes the gate and admission decide over: built once per change of the nodes, not per pod.
  let schedulable: { snapshot: unknown; nodes: CandidateNodes } | undefined;
  source.store.onNode(() => { schedulable = undefined; });
  function schedulableNow(): CandidateNodes {
    if (schedulable?.snapshot !== source.snapshot) {
      schedulable = { snapshot: source.snapshot, nodes: resolved({ ...schedulableNodes(source.snapshot), memo: new Map() }) };
    }
    return schedulable.nodes;
  }

  /**
   * Filter verdicts kept for the prioritize call of the same scheduling cycle, by pod UID:
   * kube-scheduler calls prioritize right after the filter, with the nodes it passed, written
   * as the filter wrote them (`answered`). Few, and taken on use: per-request data that
   * outlives the request is promoted by the next scavenge.
   */
  const cycleVerdicts = new Map<string, { verdict: FilterVerdict; answered: AnsweredNames }>();
  const KEPT_CYCLES = 4;
  function keepForPrioritize(uid: string, v: FilterVerdict): AnsweredNames | undefined {
    // kube-scheduler skips prioritize when one node is left; rejected nodes are not scored.
    // Only known nodes' names: their text holds no quote or escape (namesSection.ts).
    if (!v.managed || v.passed.length < 2 || v.passedUnknown) return undefined;
    if (cycleVerdicts.size >= KEPT_CYCLES) cycleVerdicts.delete(cycleVerdicts.keys().next().value!);
    const answered = { names: v.passed, text: quotedNames(v.passed, true) };
    cycleVerdicts.set(uid, { verdict: { ...v, rejected: new Map() }, answered });
    return answered;
  }

  // Pairs, not an object keyed by name (docs/performance.md#why-the-code-is-shaped-this-way).
  const firstScores = (names: readonly string[], scores: number[]) => scores.slice(0, 50).map((score, i) => ({ node: names[i]!, score }));

  function record(d: DecisionRecord): void {
    decisions.record(d);
    metrics.decisions.inc({ verb: d.verb, outcome: d.outcome });
  }

  function outcomeOf(v: FilterVerdict): string {
    return !v.managed ? 'unmanaged' : v.passed.length > 0 ? 'placed' : v.retryAfterMs !== undefined ? 'waiting' : 'no_fit';
  }

  function decision(verb: DecisionRecord['verb'], args: ExtenderArgs, v: FilterVerdict | undefined, extra: Partial<DecisionRecord> = {}): DecisionRecord {
    const meta = args.Pod.metadata as RawObject;
    return {
      at: new Date(clock.now()).toISOString(), verb, mode: namesMode(args) ? 'NodeNames' : 'Nodes',
      pod: `${meta.namespace ?? 'default'}/${meta.name}`, uid: String(meta.uid),
      outcome: v ? outcomeOf(v) : 'not_ready', policy: v?.policy ?? 'none',
      workload: v?.model?.key, summary: clipReason(v?.summary ?? NOT_SYNCED),
      nodes: v ? v.passed.length + rejectedCount(v) : 0,
      passed: { count: v?.passed.length ?? 0, sample: v?.passed.slice(0, 20) ?? [] },
      rejected: v ? summarizeRejections(v) : [],
      ...extra,
    };
  }

  return {
    /** Reservations, waits, conflicts and the rest the debug views read. */
    state,
    decisions,
    /** How many nodes one request may name: bounded by the cluster, not by the request. */
    maxCandidates: () => maxCandidates(source.snapshot.nodeCount()),
    /** The names of the filter answers a prioritize may come for (the request parser recognizes them). */
    *answeredNames(): Iterable<AnsweredNames> {
      for (const kept of cycleVerdicts.values()) yield kept.answered;
    },

    /** The ExtenderFilterResult as JSON text (see encoding.ts for why not an object). */
    async filter(args: ExtenderArgs): Promise<string> {
      if (!source.ready()) {
        // Fail safe: a pinned pod is never placed on a cache that may be wrong.
        const why = source.synced() ? STALE : NOT_SYNCED;
        record(decision('filter', args, undefined, { error: why }));
        return encodeError(why);
      }
      const decided = await core.decide(pendingPod(args.Pod), nodesOf(args), { claimId: { annotate: true }, commit: () => true });
      const v = decided.verdict;
      const answered = namesMode(args) ? keepForPrioritize(decided.input.pod.uid, v) : undefined;
      const d = decision('filter', args, v);
      record(d);
      if (log.isLevelEnabled('debug')) log.debug({ pod: d.pod, outcome: d.outcome, passed: d.passed.count, nodes: d.nodes }, v.summary);
      // A wait that ends with time, not with a cluster event: an error makes kube-scheduler
      // retry with its backoff, where "no node fits" would park the pod for minutes.
      if (v.passed.length === 0 && v.retryAfterMs !== undefined) {
        return encodeError(`zonekeeper: ${clipReason(v.summary)} (retry in ${Math.ceil(v.retryAfterMs / 1000)}s)`);
      }
      return encodeFilterResult(v, namesMode(args) ? undefined : args.Nodes?.items ?? [], config.extender, answered?.text);
    },

    /** The HostPriorityList as JSON text. */
    prioritize(args: ExtenderArgs): string {
      if (!source.ready()) {
        metrics.decisions.inc({ verb: 'prioritize', outcome: 'not_ready' });
        return '[]';
      }
      const pod = core.known(pendingPod(args.Pod));
      const names = namesOf(args);
      // After its filter: the cycle's verdict, and no lookup per name.
      const kept = namesMode(args) ? cycleVerdicts.get(pod.uid)?.verdict : undefined;
      cycleVerdicts.delete(pod.uid);
      const allowed = kept && passedInOrder(names, kept.passed);
      if (kept && allowed) {
        const scores = scoreAllowed(allowed, kept, pod.uid, (i) => source.snapshot.node(names[i]!));
        record(decision('prioritize', args, kept, { nodes: names.length, passed: { count: names.length, sample: names.slice(0, 20) }, scores: firstScores(names, scores) }));
        return encodePriorities(names, scores, () => !kept.passedUnknown);
      }
      const { input, verdict: v } = core.decideNow(pod, nodesOf(args, names));
      const scores = scoreNodes(input, v);
      record(decision('prioritize', args, v, { scores: firstScores(names, scores) }));
      const { nodes } = input.candidates;
      return encodePriorities(names, scores, (i) => nodes[i] !== undefined);
    },

    /**
     * Preemption (docs/design.md#preemption): of kube-scheduler's candidate nodes, those the
     * pod may use once their victims are gone. A node the decision passes is kept; one only an
     * unresolvable rule rejects (a pin, a volume, the pod's own affinity) is dropped, whatever
     * victims it offers; one a resolvable rule rejects (a quota, a limit, spreading) is decided
     * again over the cluster without its victims, and kept only if the pod then fits there.
     * Nothing is reserved; on a cache that is not ready no candidate is kept.
     */
    preempt(args: PreemptionArgs): string {
      const names = [...args.candidates.keys()];
      const call: ExtenderArgs = { Pod: args.Pod, NodeNames: names };
      if (!source.ready()) {
        record(decision('preempt', call, undefined, { error: source.synced() ? STALE : NOT_SYNCED }));
        return encodePreemptionResult(new Map());
      }
      const pod = pendingPod(args.Pod);
      const v = core.decideNow(pod, resolved(candidatesNamed(names, source.snapshot))).verdict;
      const passed = new Set(v.passed);
      const replay = new Set<string>();
      for (const [r, rejected] of v.rejected) if (!r.unresolvable && r.rule !== 'cache') for (const n of rejected) replay.add(n);
      const kept = new Map<string, MetaVictims>();
      for (const [node, victims] of args.candidates) {
        if (passed.has(node)) kept.set(node, victims);
        else if (replay.has(node) && victims.Pods.length > 0) {
          const without = withoutPods(source.snapshot, new Set(victims.Pods.map((p) => p.UID)));
          const again = core.decideNow(pod, resolved(candidatesNamed([node], without)), {}, without).verdict;
          if (again.passed.includes(node)) kept.set(node, victims);
        }
      }
      record(decision('preempt', call, v, { passed: { count: kept.size, sample: [...kept.keys()].slice(0, 20) } }));
      return encodePreemptionResult(kept);
    },

    /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
    pickPodsToRemove(namespace: string, n: number, candidates: readonly string[]): PickResult | undefined {
      if (!source.synced()) {
        metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: 'not_ready' });
        return undefined;
      }
      const pick = pickPodsToRemove(namespace, n, candidates, source.snapshot, settings, state);
      metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: pick.warnings.length > 0 ? 'warnings' : 'picked' });
      log.debug({ namespace, n, candidates: candidates.length, chosen: pick.chosen, tied: pick.tied }, 'downscale pod picker');
      return pickResult(pick);
    },

    decisionsFor: (pod: string) => decisions.forPod(pod),
    reservationCount: () => state.reservations.size(),

    workloadLayout(kind: WorkloadKind, namespace: string, name: string): LayoutWithConflicts | undefined {
      const layout = workloadLayout(source.snapshot, kind, namespace, name, state);
      if (!layout) return undefined;
      const key = workloadKey({ kind, namespace, name });
      return { ...layout, conflicts: state.conflicts().filter((x) => x.workload === key) };
    },

    layouts(namespace: string | undefined, healthOf?: (key: string) => WorkloadHealth | undefined) {
      const { layouts, more } = managedLayouts(source.snapshot, state, namespace, undefined, undefined, healthOf);
      const conflicts = state.conflicts();
      return {
        more, podsPerAnswer: LAYOUT_PODS_PER_ANSWER,
        layouts: layouts.map((l) => ({ ...l, conflicts: conflicts.filter((x) => x.workload === workloadKey(l.workload)) })),
      };
    },

    /**
     * A gated pod's decision (docs/design.md#the-zone-gate): the filter's policy code over the
     * schedulable cached nodes; an instance ID is assigned first, as the filter does. A decided
     * verdict's effects (reservation, list freeze) are carried out; nothing is decided blind.
     */
    async decideGate(cached: SlimPod): Promise<GateDecision> {
      const args: ExtenderArgs = { Pod: { metadata: { name: cached.name, namespace: cached.namespace, uid: cached.uid } }, NodeNames: [] };
      if (!source.ready()) return { kind: 'wait', why: source.synced() ? STALE : NOT_SYNCED };
      const moving = volumeStillMoving(cached, source.snapshot);
      if (moving) return { kind: 'wait', why: moving };
      const decided = await core.decide(cached, schedulableNow(), {
        writesSpec: true, claimId: { annotate: false }, commit: (x) => writtenDecision(x).kind !== 'wait',
      });
      const v = decided.verdict;
      const d = writtenDecision(decided);
      record(decision('gate', args, v, { outcome: d.kind === 'wait' ? 'waiting' : 'ungated' }));
      return d;
    },

    /**
     * The decision for a pod being created (docs/design.md#admission), written into it at once.
     * Only the Lease holder decides (quotas, zone limits, instance IDs and list freezes are
     * counted in one place); a pod that cannot be decided now (a replica without the Lease, a
     * volume that may move, no room, an adaptive fallback to watch) gets the zone gate, and the
     * keeper decides it. `dryRun`: nothing is reserved, claimed or written.
     */
    async decideAdmission(pod: SlimPod, o: { dryRun: boolean; leading: boolean }): Promise<AdmissionDecision> {
      const args: ExtenderArgs = { Pod: { metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid } }, NodeNames: [] };
      if (!source.ready()) return { kind: 'gate', why: source.synced() ? STALE : NOT_SYNCED };
      const moving = volumeStillMoving(pod, source.snapshot);
      if (moving) return { kind: 'gate', why: moving };
      const nodes = schedulableNow();
      // Written now or left to the keeper: a pod lifted under an adaptive fallback is the keeper's to watch, except an Adaptive
      // subset's when zonekeeper keeps WorkloadSpread status: its controller reschedules the subset's pods as Kruise's does.
      const watched = (g: GateDecision) => g.kind !== 'wait' && g.kind !== 'as-is' && !!g.fallback && !(g.kind === 'subset' && config.workloadSpread.writeStatus);
      const now = (x: Decided): AdmissionDecision => {
        if (!x.verdict.managed) return { kind: 'as-is', why: x.verdict.summary };
        const g = writtenDecision(x);
        return g.kind === 'wait' || watched(g) ? { kind: 'gate', why: g.why } : g;
      };
      if (!o.leading || o.dryRun) {
        const dry = core.decideNow(pod, nodes, { writesSpec: true });
        if (!dry.verdict.managed) return { kind: 'as-is', why: dry.verdict.summary };
        if (!o.leading) return { kind: 'gate', why: 'this replica does not hold the Lease: the zone gate keeper decides it' };
        return dry.model?.seats === 'instance-id' && pod.instanceId < 0 ? { kind: 'gate', why: 'a dry run takes no instance ID' } : now(dry);
      }
      // One decision, its effects carried out in the same turn (the next review sees its reservation).
      const decided = await core.decide(pod, nodes, { writesSpec: true, claimId: { annotate: false }, commit: (x) => x.verdict.managed && now(x).kind !== 'gate' });
      const d = now(decided);
      if (d.kind !== 'gate' && d.kind !== 'as-is') record(decision('admission', args, decided.verdict, { outcome: 'admitted' }));
      return d;
    },

    /** A dry-run filter of a cached pod against every cached node: nothing is reserved or written. */
    explain(namespace: string, name: string): Explained | undefined {
      const raw = source.snapshot.pod(namespace, name);
      if (!raw) return undefined;
      const all = [...source.snapshot.nodes()];
      const candidates: Candidates = { names: all.map((n) => n.name), nodes: all };
      // The instance ID it holds or this process gave it, as the filter would see it; nothing claimed.
      const v = core.decideNow(raw, resolved(candidates)).verdict;
      const args: ExtenderArgs = { Pod: { metadata: { name, namespace, uid: raw.uid } }, NodeNames: [] };
      const failed: Record<string, string> = {};
      for (const [r, names] of v.rejected) for (const n of names) failed[n] = `${r.rule}: ${r.reason}`;
      const zones = v.model && v.model.policy !== 'none' && v.model.policy !== 'wait' ? zonesShown(v.model.zones(), source.snapshot) : undefined;
      return { ...decision('explain', args, v), nodes: all.length, passed: { count: v.passed.length, sample: [...v.passed] }, failed, zones };
    },
  };
}
