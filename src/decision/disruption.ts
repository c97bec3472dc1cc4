import type { Actuator } from '../actuator/actuator.js';
import { StillConflicting } from '../actuator/conditionalPatch.js';
import { ANNOTATION } from '../cluster/annotations.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Clock } from '../common/clock.js';
import { podModel } from '../placement/model.js';
import type { PlacementSettings } from '../placement/settings.js';
import { workloadKey } from '../placement/workload.js';
import { formatApprovals, lapsing, parseApprovals, type Approval } from '../placement/disruptionApprovals.js';
import { downPodsAlwaysGo, evictionVerdict, seatMap, zoneBudgetOf, type EvictionVerdict } from '../placement/zoneDisruption.js';

// The eviction gate's decision (docs/design.md#zone-at-a-time): whether a voluntary disruption of
// one pod may go now, judged on the seat map that places pods, and the approval recorded on its
// workload, conditionally, before the answer: the one write the answer waits for, as the
// instance-ID claim is (two evictions in two zones at the same instant cannot both pass).

/** An eviction as a transport asks about it. */
export interface EvictionAsk {
  namespace: string;
  name: string;
  /** Judged, nothing recorded (`kubectl drain --dry-run=server`, a controller's look-ahead). */
  dryRun: boolean;
  /** Whether this replica holds the Lease: only the holder records approvals. */
  leading: boolean;
  /** Who asks (the review's user), for the record. */
  by?: string;
  /** The webhook (every eviction the API server sends it) or zonekeeper's own, judged in process before it is sent (the webhook skips them). */
  asker: 'api' | 'zonekeeper';
}

/** The answer: allowed, or refused (429: the client retries, as after a PodDisruptionBudget's refusal), and what it is about. */
export interface EvictionAnswer {
  allowed: boolean;
  why: string;
  /** The workload whose budget judged it (`namespace/Kind/name`); undefined: not covered. */
  workload?: string;
  zone?: string;
  /** What a refusal waits for, in words. */
  waitsFor?: string[];
  /** Allowed only as the pod is now (let go as down already): zonekeeper's own eviction is conditional on this resourceVersion. */
  resourceVersion?: string;
  outcome: 'not-covered' | 'allowed' | 'refused' | 'not-ready' | 'not-leading' | 'conflict' | 'error';
}

export interface DisruptionDeps {
  source: SnapshotSource;
  settings: PlacementSettings;
  actuator: Pick<Actuator, 'recordApprovals' | 'livePod'>;
  clock: Clock;
  /** An approval whose pod still stands after this long never became an eviction: it lapses. */
  approvalMs: number;
  /** Why no decision may be made now (the cache), or undefined. */
  notReady(): string | undefined;
}

const covered = (why: string): EvictionAnswer => ({ allowed: true, why, outcome: 'not-covered' });

/** Lapses confirmed by a live read per judgment at most: one more stays in force (counted down), as if its pod had gone. */
const LAPSE_READS = 4;

/** The approvals of `lapsing` whose pod a live read shows standing, the same UID, not terminating: they may lapse. */
async function confirmedLapses(deps: DisruptionDeps, namespace: string, lapsing: readonly Approval[]): Promise<Set<Approval>> {
  const confirmed = new Set<Approval>();
  for (const a of lapsing.slice(0, LAPSE_READS)) {
    // Not read, not confirmed: never decided blind, the approval holds its zone.
    const pod = await deps.actuator.livePod(namespace, a.pod).catch(() => undefined);
    if (pod && pod.uid === a.uid && !pod.terminating) confirmed.add(a);
  }
  return confirmed;
}

type Judged = { verdict: EvictionVerdict; resourceVersion?: string };

/**
 * A pod let go as down already, read live: the answer holds for it as it is now (its
 * resourceVersion), or is refused when it turned Ready or was replaced since the cache saw it.
 */
async function stillDown(deps: DisruptionDeps, ask: EvictionAsk, uid: string, nodeName: string | undefined, verdict: EvictionVerdict): Promise<Judged> {
  const refuse = (why: string): Judged => ({ verdict: { allowed: false, zone: verdict.zone, why, waitsFor: [] } });
  let pod;
  try {
    pod = await deps.actuator.livePod(ask.namespace, ask.name);
  } catch (err) {
    return refuse(`zonekeeper: could not read pod ${ask.name} to confirm it is still down (${(err as Error).message}); retry`);
  }
  if (!pod || pod.uid !== uid) return refuse(`zonekeeper: pod ${ask.name} is gone or replaced since its cache saw it down; retry`);
  const nodeReady = nodeName !== undefined && deps.source.snapshot.node(nodeName)?.ready === true;
  if (pod.ready && !pod.terminating && nodeReady) return refuse(`zonekeeper: pod ${ask.name} turned Ready since its cache saw it down; judged again on retry`);
  return { verdict, resourceVersion: pod.resourceVersion || undefined };
}

/** Decides one eviction; an allowed one is recorded on its workload before it returns. */
export async function decideEviction(deps: DisruptionDeps, ask: EvictionAsk): Promise<EvictionAnswer> {
  const { source, clock } = deps;
  if (deps.notReady()) return { allowed: false, why: 'zonekeeper: its cluster cache is not ready (never decides blind); retry the eviction', outcome: 'not-ready' };
  const snapshot = source.snapshot;
  const pod = snapshot.pod(ask.namespace, ask.name);
  if (!pod) return covered(`pod ${ask.namespace}/${ask.name} is not in zonekeeper's cache: not a pod of a workload it keeps`);
  const model = podModel(pod, snapshot, deps.settings);
  const w = model?.workload;
  // Its workload not in the cache yet: whether it is opted in cannot be told, so it waits (never decides blind).
  if (model?.policy === 'wait') return { allowed: false, why: `zonekeeper: ${model.why}; retry the eviction`, outcome: 'not-ready' };
  if (!model || !w) return covered(`pod ${ask.name}: no zone layout covers it`);
  const budget = zoneBudgetOf(w);
  const what = `${w.kind} ${w.namespace}/${w.name}`;
  const workload = workloadKey(w);
  // Opted in, it is judged whatever places it: with no policy covering it, on its pods' zones (docs/design.md#the-zone-disruption-budget).
  if (budget === undefined) return covered(model.policy === 'none' ? `pod ${ask.name}: no zone layout covers it` : `${what} has no ${ANNOTATION.zoneDisruptionBudget}`);
  if ('error' in budget) return { allowed: false, why: `${what}: ${budget.error}`, workload, outcome: 'refused' };
  const downAlwaysGo = downPodsAlwaysGo(w);
  if (typeof downAlwaysGo !== 'boolean') return { allowed: false, why: `${what}: ${downAlwaysGo.error}`, workload, outcome: 'refused' };
  if (!ask.leading) {
    return { allowed: false, why: `zonekeeper: this replica does not hold the Lease; the holder decides evictions of ${what}, retry`, workload, outcome: 'not-leading' };
  }
  const judge = async (recorded: string | undefined): Promise<Judged> => {
    const approvals = parseApprovals(recorded);
    const map = seatMap(model, w, source.snapshot, approvals);
    const now = clock.now();
    const confirmed = await confirmedLapses(deps, ask.namespace, lapsing(approvals, map, now, deps.approvalMs));
    const verdict = evictionVerdict(what, map, approvals, ask.name, budget, now, deps.approvalMs, { downAlwaysGo, lapseConfirmed: (a) => confirmed.has(a) });
    const holder = map.holders.get(ask.name);
    if (!verdict.allowed || !verdict.downAlready || !holder || ask.dryRun) return { verdict };
    return stillDown(deps, ask, holder.pod.uid, holder.pod.nodeName, verdict);
  };
  let judged: Judged;
  try {
    judged = await deps.actuator.recordApprovals<Judged>(w, async (recorded) => {
      const j = await judge(recorded);
      if (!j.verdict.allowed || ask.dryRun) return { done: j };
      const text = formatApprovals(j.verdict.approvals);
      return text === (recorded ?? formatApprovals([])) ? { done: j } : { annotations: { [ANNOTATION.disruptionApprovals]: text }, result: j };
    });
  } catch (err) {
    // Not recorded, so not allowed: the client asks again.
    return { allowed: false, why: `zonekeeper: the approval for ${ask.name} of ${what} was not recorded (${(err as Error).message}); retry`, workload,
      outcome: err instanceof StillConflicting ? 'conflict' : 'error' };
  }
  const v = judged.verdict;
  return v.allowed
    ? { allowed: true, why: v.why, workload, zone: v.zone, outcome: 'allowed', ...(judged.resourceVersion ? { resourceVersion: judged.resourceVersion } : {}) }
    : { allowed: false, why: v.why, workload, zone: v.zone, waitsFor: v.waitsFor, outcome: 'refused' };
}
