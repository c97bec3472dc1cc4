import type { Actuator } from '../actuator/actuator.js';
import { StillConflicting } from '../actuator/conditionalPatch.js';
import { ANNOTATION } from '../cluster/annotations.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Clock } from '../common/clock.js';
import { podModel } from '../placement/model.js';
import type { PlacementSettings } from '../placement/settings.js';
import { workloadKey } from '../placement/workload.js';
import {
  approvalsLimit, downPodsAlwaysGo, evictionVerdict, formatApprovals, parseApprovals, seatMap, zoneBudgetOf, type EvictionVerdict,
} from '../placement/zoneDisruption.js';

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
  /** The webhook (every eviction the API server receives) or zonekeeper's own, judged in process before it is sent. */
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
  outcome: 'not-covered' | 'allowed' | 'refused' | 'not-ready' | 'not-leading' | 'conflict' | 'error';
}

export interface DisruptionDeps {
  source: SnapshotSource;
  settings: PlacementSettings;
  actuator: Pick<Actuator, 'recordApprovals'>;
  clock: Clock;
  /** An approval whose pod still stands after this long never became an eviction: it lapses. */
  approvalMs: number;
  /** Why no decision may be made now (the cache), or undefined. */
  notReady(): string | undefined;
}

const covered = (why: string): EvictionAnswer => ({ allowed: true, why, outcome: 'not-covered' });

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
  if (!model || !w || model.policy === 'none') return covered(`pod ${ask.name}: no zone layout covers it`);
  const budget = zoneBudgetOf(w);
  const what = `${w.kind} ${w.namespace}/${w.name}`;
  const workload = workloadKey(w);
  if (budget === undefined) return covered(`${what} has no ${ANNOTATION.zoneDisruptionBudget}`);
  if ('error' in budget) return { allowed: false, why: `${what}: ${budget.error}`, workload, outcome: 'refused' };
  const downAlwaysGo = downPodsAlwaysGo(w);
  if (typeof downAlwaysGo !== 'boolean') return { allowed: false, why: `${what}: ${downAlwaysGo.error}`, workload, outcome: 'refused' };
  if (!ask.leading) {
    return { allowed: false, why: `zonekeeper: this replica does not hold the Lease; the holder decides evictions of ${what}, retry`, workload, outcome: 'not-leading' };
  }
  const judge = (recorded: string | undefined): EvictionVerdict => {
    const map = seatMap(model, w, source.snapshot);
    const approvals = parseApprovals(recorded, approvalsLimit(map));
    return evictionVerdict(what, map, approvals, ask.name, budget, clock.now(), deps.approvalMs, downAlwaysGo);
  };
  let v: EvictionVerdict;
  try {
    v = await deps.actuator.recordApprovals<EvictionVerdict>(w, (recorded) => {
      const verdict = judge(recorded);
      if (!verdict.allowed || ask.dryRun) return { done: verdict };
      const text = formatApprovals(verdict.approvals);
      return text === (recorded ?? formatApprovals([])) ? { done: verdict } : { annotations: { [ANNOTATION.disruptionApprovals]: text }, result: verdict };
    });
  } catch (err) {
    // Not recorded, so not allowed: the client asks again.
    return { allowed: false, why: `zonekeeper: the approval for ${ask.name} of ${what} was not recorded (${(err as Error).message}); retry`, workload,
      outcome: err instanceof StillConflicting ? 'conflict' : 'error' };
  }
  return v.allowed
    ? { allowed: true, why: v.why, workload, zone: v.zone, outcome: 'allowed' }
    : { allowed: false, why: v.why, workload, zone: v.zone, waitsFor: v.waitsFor, outcome: 'refused' };
}
