import type { Clock } from '../common/clock.js';
import type { Config } from '../common/config.js';
import type { Metrics } from '../metrics/metrics.js';
import { clipReason } from '../placement/policy.js';
import { rejectedCount, type FilterVerdict } from '../placement/verdict.js';
import { DecisionLog, summarizeRejections, type DecisionRecord } from './decisions.js';

// The one recording rule (docs/design.md#transports): every decision the service makes
// for a transport is kept for /debug/decisions and counted in zonekeeper_decisions_total under the
// verb that asked; a dry run or an explanation is counted or returned, never kept as if it acted.

export const NOT_SYNCED = 'zonekeeper: cluster cache not synced yet; the pod will be retried';
export const STALE = 'zonekeeper: cluster cache is stale (watches failing); the pod will be retried';

/** The pod a decision is about, as every transport names it. */
interface PodRef { namespace: string; name: string; uid: string }

/** The transport's verb that asked for a decision: what it is recorded and counted under. */
type DecisionVerb = DecisionRecord['verb'];

export interface DecisionRecorder {
  /** The record of a decision about `pod` asked by `verb`; no verdict: not decided (the cache not ready). Kept nowhere. */
  recordOf(verb: DecisionVerb, pod: PodRef, v: FilterVerdict | undefined, extra?: Partial<DecisionRecord>): DecisionRecord;
  /** Keeps a decision for /debug/decisions and counts it; returns it. */
  record(verb: DecisionVerb, pod: PodRef, v: FilterVerdict | undefined, extra?: Partial<DecisionRecord>): DecisionRecord;
  /** Keeps a record made elsewhere (an eviction's) without counting it. */
  keep(d: DecisionRecord): void;
  /** Counts an outcome of `verb` only. */
  count(verb: DecisionVerb | 'downscale-pod-picker', outcome: string): void;
  /** The last decisions about a pod (`namespace/name`). */
  decisionsFor(pod: string): DecisionRecord[];
}

function outcomeOf(v: FilterVerdict): string {
  return !v.managed ? 'unmanaged' : v.passed.length > 0 ? 'placed' : v.retryAfterMs !== undefined ? 'waiting' : 'no_fit';
}

export function decisionRecorder(config: Pick<Config, 'debug'>, metrics: Metrics, clock: Clock): DecisionRecorder {
  const log = new DecisionLog(config.debug.decisionsKeptPods, config.debug.decisionsPerPod, config.debug.decisionsMaxBytes);
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
  const count = (verb: DecisionVerb | 'downscale-pod-picker', outcome: string) => metrics.decisions.inc({ verb, outcome });
  return {
    recordOf,
    record(verb, pod, v, extra) {
      const d = recordOf(verb, pod, v, extra);
      log.record(d);
      count(d.verb, d.outcome);
      return d;
    },
    keep: (d) => log.record(d),
    count,
    decisionsFor: (pod) => log.forPod(pod),
  };
}
