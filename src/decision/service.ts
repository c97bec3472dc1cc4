import type { PendingPod } from '../cluster/objects.js';
import { systemClock } from '../common/clock.js';
import { clipReason } from '../placement/policy.js';
import { rejectedCount, type FilterVerdict } from '../placement/verdict.js';
import { gateDecision, schedulableNodes, volumeStillMoving, type GateDecision } from '../placement/zoneGate.js';
import { decisionCore, type CandidateNodes, type Decided, type DecisionCoreDeps } from './core.js';
import { DecisionLog, summarizeRejections, type DecisionRecord } from './decisions.js';
import { decideEviction, type EvictionAnswer, type EvictionAsk } from './disruption.js';

// The one decision service (docs/design.md#data-flow): built once in main.ts and handed to every
// transport (the extender's verbs, admission, the gate keeper, the debug views). It owns the one
// reservation ledger (a second core would be a second ledger), the decision log, readiness, the
// volume-still-moving rule and the shape of a decision written into a pod's spec.

export const NOT_SYNCED = 'zonekeeper: cluster cache not synced yet; the pod will be retried';
export const STALE = 'zonekeeper: cluster cache is stale (watches failing); the pod will be retried';

/** The pod a decision is about, as every transport names it. */
export interface PodRef { namespace: string; name: string; uid: string }

/** The transport's verb that asked for a decision: what it is recorded and counted under. */
type DecisionVerb = DecisionRecord['verb'];

/** What the service is made of: what the decision core is. */
export type DecisionServiceDeps = DecisionCoreDeps;

export type DecisionService = ReturnType<typeof decisionService>;

export function decisionService(deps: DecisionServiceDeps) {
  const { source, metrics, config } = deps;
  const clock = deps.clock ?? systemClock;
  const core = decisionCore({ ...deps, clock });
  const log = new DecisionLog(config.debug.decisionsKeptPods, config.debug.decisionsPerPod, config.debug.decisionsMaxBytes);

  /** Why no decision may be made now (never decided blind: kube-scheduler, the keeper or the webhook retries), or undefined. */
  function notReady(): string | undefined {
    return source.ready() ? undefined : source.synced() ? STALE : NOT_SYNCED;
  }

  /**
   * Why a decision to write into this pod's spec must wait, or undefined: the cache not ready, or
   * a volume that may still move (a zone written into the spec cannot be taken back).
   */
  function specWaits(pod: PendingPod): string | undefined {
    return notReady() ?? volumeStillMoving(pod, source.snapshot);
  }

  /**
   * A decision to write into the pod's spec (the gate's patch, admission's): the verdict's, waiting
   * while its instance ID could not be claimed; an ID this process just gave the pod goes in the
   * same write as the zone it pins (a rollout's successor holds none yet).
   */
  function written(x: Decided): GateDecision {
    if (x.idError !== undefined) return { kind: 'wait', why: x.idError };
    const g = gateDecision(x.verdict, x.input);
    return g.kind === 'zone' && x.givenId !== undefined ? { ...g, instanceId: x.givenId } : g;
  }

  // The Ready, schedulable nodes a decision written into the spec is made over: built once per change of the nodes, not per pod.
  let schedulable: { snapshot: unknown; nodes: CandidateNodes } | undefined;
  source.store.onNode(() => { schedulable = undefined; });
  function schedulableNow(): CandidateNodes {
    if (schedulable?.snapshot !== source.snapshot) {
      const candidates = { ...schedulableNodes(source.snapshot), memo: new Map() };
      schedulable = { snapshot: source.snapshot, nodes: { names: candidates.names, resolve: () => candidates } };
    }
    return schedulable.nodes;
  }

  function outcomeOf(v: FilterVerdict): string {
    return !v.managed ? 'unmanaged' : v.passed.length > 0 ? 'placed' : v.retryAfterMs !== undefined ? 'waiting' : 'no_fit';
  }

  /** The record of a decision about `pod` asked by `verb`; no verdict: not decided (the cache not ready). */
  function recordOf(verb: DecisionVerb, pod: PodRef, v: FilterVerdict | undefined, extra: Partial<DecisionRecord> = {}): DecisionRecord {
    return {
      at: new Date(clock.now()).toISOString(), verb, pod: `${pod.namespace}/${pod.name}`, uid: pod.uid,
      outcome: v ? outcomeOf(v) : 'not_ready', policy: v?.policy ?? 'none',
      workload: v?.model?.key, summary: clipReason(v?.summary ?? NOT_SYNCED),
      nodes: v ? v.passed.length + rejectedCount(v) : 0,
      passed: { count: v?.passed.length ?? 0, sample: v?.passed.slice(0, 20) ?? [] },
      rejected: v ? summarizeRejections(v) : [],
      ...extra,
    };
  }

  /** Counts an outcome of `verb` (zonekeeper_decisions_total). */
  function count(verb: DecisionVerb | 'downscale-pod-picker', outcome: string): void {
    metrics.decisions.inc({ verb, outcome });
  }

  /** Keeps a decision for /debug/decisions and counts it; returns it. */
  function record(verb: DecisionVerb, pod: PodRef, v: FilterVerdict | undefined, extra: Partial<DecisionRecord> = {}): DecisionRecord {
    const d = recordOf(verb, pod, v, extra);
    log.record(d);
    count(d.verb, d.outcome);
    return d;
  }

  /** An eviction judged by the zone disruption budget (recorded on its workload when allowed), kept in the log and counted. */
  async function eviction(ask: EvictionAsk): Promise<EvictionAnswer> {
    const approvalMs = config.disruption.approvalSeconds * 1000;
    const answer = await decideEviction({ source, settings: core.settings, actuator: deps.actuator, clock, approvalMs, notReady }, ask);
    const pod = source.snapshot.pod(ask.namespace, ask.name);
    const d: DecisionRecord = {
      at: new Date(clock.now()).toISOString(), verb: 'eviction', pod: `${ask.namespace}/${ask.name}`, uid: pod?.uid ?? '', outcome: answer.outcome,
      policy: answer.workload ? 'zone-disruption-budget' : 'none', workload: answer.workload, nodes: 0,
      summary: clipReason(ask.by ? `${answer.why} (asked by ${ask.by})` : answer.why),
      passed: { count: 0, sample: [] }, rejected: [],
    };
    if (answer.outcome !== 'not-covered') log.record(d);
    metrics.evictions.inc({ outcome: answer.outcome });
    return answer;
  }

  return {
    /** Judges a voluntary disruption of a pod by its workload's zone disruption budget (docs/design.md#zone-at-a-time). */
    eviction,
    /** Reservations, waits, conflicts: what decisions remember, and the debug views and controllers read. */
    state: core.state,
    settings: core.settings,
    /** The pod with the instance ID this process knows for it. */
    known: core.known,
    /** Decides, claiming an instance ID when asked; carries out the verdict's effects when `ask.commit` says so. */
    decide: core.decide,
    /** Decides now with the known instance ID: nothing claimed, nothing carried out. */
    decideNow: core.decideNow,
    notReady,
    specWaits,
    written,
    schedulableNow,
    recordOf,
    record,
    count,
    /** The last decisions about a pod (`namespace/name`). */
    decisionsFor: (pod: string): DecisionRecord[] => log.forPod(pod),
  };
}
