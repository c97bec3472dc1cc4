import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { Actuator } from '../actuator/actuator.js';
import { pendingPod, slimNode, unshared, type PendingPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import { pickPodsToRemove, type PickResult } from '../placement/downscale.js';
import { firstSeatCounts } from '../placement/fleet.js';
import { filterNodes, rejectAll as waitVerdict } from '../placement/filtering.js';
import { Reservations } from '../placement/reservations.js';
import { scoreNodes } from '../placement/scoring.js';
import { clipReason, rejectedCount, type Candidate, type FilterInput, type FilterVerdict, type PlacementSettings } from '../placement/verdict.js';
import { workloadKey } from '../placement/workload.js';
import { DecisionLog, summarizeRejections, type Decision } from './decisions.js';
import { encodeError, encodeFilterResult } from './encoding.js';
import { instanceIdStep } from './instanceIds.js';
import { maxCandidates, namesMode, type ExtenderArgs, type HostPriority, type RawObject } from './protocol.js';

export const NOT_SYNCED = 'zonekeeper: cluster cache not synced yet; the pod will be retried';
export const STALE = 'zonekeeper: cluster cache is stale (watches failing); the pod will be retried';

export interface PinConflict {
  pod: string;
  workload: string;
  pinnedZone: string;
  volumeZones: string[];
  reason: string;
  at: string;
}

export interface ExtenderDeps {
  source: SnapshotSource;
  actuator: Actuator;
  metrics: Metrics;
  log: Logger;
  config: Config;
  clock?: { now(): number };
}

export type Extender = ReturnType<typeof createExtender>;

/**
 * The stateful side of the decisions: reservations, how long pods have waited, Adaptive
 * subsets marked unschedulable, conflicts seen, recent decisions. Placement stays pure;
 * this carries out the effects its verdicts ask for.
 */
export function createExtender(deps: ExtenderDeps) {
  const { source, actuator, metrics, log, config } = deps;
  const clock = deps.clock ?? Date;
  const settings: PlacementSettings = { ...config.placement };
  const reservations = new Reservations(config.placement.reservationTtlSeconds, clock);
  const waitingSince = new LRUCache<string, number>({ max: 100_000, ttl: 3_600_000, perf: clock });
  const unschedulable = new LRUCache<string, number>({ max: 10_000, ttl: config.placement.adaptiveUnschedulableSeconds * 1000, perf: clock });
  const conflicts = new LRUCache<string, PinConflict>({ max: 10_000 });
  const decisions = new DecisionLog(config.debug.decisionsKeptPods, config.debug.decisionsPerPod, config.debug.decisionsMaxBytes);

  // A reservation ends when the watch shows the pod bound or gone (DESIGN §8).
  source.store.onPod((type, pod) => {
    if (type === 'delete' || pod.nodeName) {
      reservations.release(pod.uid);
      if (type === 'delete') {
        waitingSince.delete(pod.uid);
        ids.forget(pod.uid);
      }
    }
  });

  function candidatesOf(args: ExtenderArgs): Candidate[] {
    if (namesMode(args)) return args.NodeNames!.map((name) => ({ name, node: source.snapshot.node(name) }));
    return (args.Nodes?.items ?? []).map((raw) => ({ name: raw.metadata.name, node: slimNode(raw, unshared) }));
  }

  const ids = instanceIdStep(source.snapshot, actuator, log);
  const reportedPreferences = new LRUCache<string, true>({ max: 10_000 });

  function inputOf(pod: PendingPod, candidates: Candidate[]): FilterInput {
    return {
      pod, candidates, snapshot: source.snapshot, reservations, settings, now: clock.now(),
      waitingSince: waitingSince.get(pod.uid),
      pendingFreeze: actuator.pendingFreeze,
      firstSeats: () => firstSeatCounts(source.snapshot, actuator.pendingFreezes()),
      unschedulableUntil: (key) => unschedulable.get(key),
    };
  }

  function apply(input: FilterInput, v: FilterVerdict): void {
    if (!v.managed || !v.workload) return;
    const { pod, now } = input;
    const wk = workloadKey(v.workload);
    if (v.passed.length > 0) waitingSince.delete(pod.uid);
    else if (!waitingSince.has(pod.uid)) waitingSince.set(pod.uid, now);
    const e = v.effects;
    if (e.reserve) reservations.reserve({ uid: pod.uid, pod: `${pod.namespace}/${pod.name}`, workload: wk, zone: e.reserve.zone, subset: e.reserve.subset, at: now });
    if (e.freeze) actuator.freezeZones(e.freeze.workload, e.freeze.zones);
    if (e.markUnschedulable) {
      unschedulable.set(e.markUnschedulable.key, e.markUnschedulable.until, { ttl: Math.max(1, e.markUnschedulable.until - now) });
      log.info({ subset: e.markUnschedulable.key, pod: `${pod.namespace}/${pod.name}` }, 'Adaptive WorkloadSpread: subset marked unschedulable');
    }
    if (e.preferencesError) {
      const key = `${e.preferencesError.workload} ${e.preferencesError.error}`;
      if (!reportedPreferences.has(key)) {
        reportedPreferences.set(key, true);
        metrics.invalidPreferences.inc({ namespace: v.workload.namespace, workload: `${v.workload.kind}/${v.workload.name}` });
        log.warn({ workload: e.preferencesError.workload, error: e.preferencesError.error }, 'invalid zonekeeper.io/zone-preferences; using the defaults');
      }
    }
    if (e.conflict && !conflicts.has(pod.uid)) {
      conflicts.set(pod.uid, { pod: `${pod.namespace}/${pod.name}`, workload: wk, ...e.conflict, reason: clipReason(e.conflict.reason), at: new Date(now).toISOString() });
      metrics.pinVolumeConflicts.inc({ namespace: pod.namespace, workload: `${v.workload.kind}/${v.workload.name}` });
      log.warn({ pod: `${pod.namespace}/${pod.name}`, pinnedZone: e.conflict.pinnedZone, volumeZones: e.conflict.volumeZones }, e.conflict.reason);
    }
  }

  function outcomeOf(v: FilterVerdict): string {
    return !v.managed ? 'unmanaged' : v.passed.length > 0 ? 'placed' : v.retryAfterMs !== undefined ? 'waiting' : 'no_fit';
  }

  function decision(verb: Decision['verb'], args: ExtenderArgs, v: FilterVerdict | undefined, extra: Partial<Decision> = {}): Decision {
    const meta = args.Pod.metadata as RawObject;
    return {
      at: new Date(clock.now()).toISOString(), verb, mode: namesMode(args) ? 'NodeNames' : 'Nodes',
      pod: `${meta.namespace ?? 'default'}/${meta.name}`, uid: String(meta.uid),
      outcome: v ? outcomeOf(v) : 'not_ready', policy: v?.policy ?? 'none',
      workload: v?.workload ? workloadKey(v.workload) : undefined, summary: clipReason(v?.summary ?? NOT_SYNCED),
      nodes: v ? v.passed.length + rejectedCount(v) : 0,
      passed: { count: v?.passed.length ?? 0, sample: v?.passed.slice(0, 20) ?? [] },
      rejected: v ? summarizeRejections(v) : [],
      ...extra,
    };
  }

  return {
    reservations,
    decisions,
    settings,
    conflicts: () => [...conflicts.values()],
    unschedulableUntil: (key: string) => unschedulable.get(key),
    pendingFreeze: actuator.pendingFreeze,
    /** How many nodes one request may name: bounded by the cluster, not by the request. */
    maxCandidates: () => maxCandidates(source.snapshot.nodeCount()),

    /** The ExtenderFilterResult as JSON text (see encoding.ts for why not an object). */
    async filter(args: ExtenderArgs): Promise<string> {
      if (!source.ready()) {
        // Fail safe: a pinned pod is never placed on a cache that may be wrong.
        const why = source.synced() ? STALE : NOT_SYNCED;
        metrics.decisions.inc({ verb: 'filter', outcome: 'not_ready' });
        decisions.record(decision('filter', args, undefined, { error: why }));
        return encodeError(why);
      }
      const candidates = candidatesOf(args);
      const ensured = await ids.ensure(pendingPod(args.Pod));
      const input = inputOf(ensured.pod, candidates);
      const v = ensured.error === undefined ? filterNodes(input)
        : waitVerdict(candidates, { rule: 'zone-pin', reason: ensured.error, unresolvable: false });
      apply(input, v);
      const d = decision('filter', args, v);
      decisions.record(d);
      metrics.decisions.inc({ verb: 'filter', outcome: d.outcome });
      if (log.isLevelEnabled('debug')) log.debug({ pod: d.pod, outcome: d.outcome, passed: d.passed.count, nodes: d.nodes }, v.summary);
      // A wait that ends with time, not with a cluster event: an error makes kube-scheduler
      // retry with its backoff, where "no node fits" would park the pod for minutes.
      if (v.passed.length === 0 && v.retryAfterMs !== undefined) {
        return encodeError(`zonekeeper: ${clipReason(v.summary)} (retry in ${Math.ceil(v.retryAfterMs / 1000)}s)`);
      }
      return encodeFilterResult(v, namesMode(args) ? undefined : args.Nodes?.items ?? [], { legacyFailedNodes: config.extender.legacyFailedNodes });
    },

    prioritize(args: ExtenderArgs): HostPriority[] {
      const candidates = candidatesOf(args);
      if (!source.ready()) {
        metrics.decisions.inc({ verb: 'prioritize', outcome: 'not_ready' });
        return candidates.map((c) => ({ Host: c.name, Score: 0 }));
      }
      const input = inputOf(ids.known(pendingPod(args.Pod)), candidates);
      const v = filterNodes(input);
      const scores = scoreNodes(input, v);
      const d = decision('prioritize', args, v, { scores: Object.fromEntries(scores.slice(0, 50).map((s) => [s.Host, s.Score])) });
      decisions.record(d);
      metrics.decisions.inc({ verb: 'prioritize', outcome: d.outcome });
      return scores;
    },

    /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
    pickPodsToRemove(namespace: string, n: number, candidates: string[]): PickResult | undefined {
      if (!source.synced()) {
        metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: 'not_ready' });
        return undefined;
      }
      const answer = pickPodsToRemove(namespace, n, candidates, source.snapshot, settings);
      metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: answer.warnings ? 'warnings' : 'picked' });
      log.debug({ namespace, n, candidates: candidates.length, chosen: answer.chosen_pods, tied: answer.tied_pods }, 'downscale pod picker');
      return answer;
    },

    /** A dry-run filter of a cached pod against every cached node: nothing is reserved or written. */
    explain(namespace: string, name: string): (Decision & { failed: Record<string, string> }) | undefined {
      const raw = source.snapshot.pod(namespace, name);
      if (!raw) return undefined;
      const candidates = [...source.snapshot.nodes()].map((node) => ({ name: node.name, node }));
      const v = filterNodes(inputOf(raw, candidates));
      const args: ExtenderArgs = { Pod: { metadata: { name, namespace, uid: raw.uid } }, NodeNames: [] };
      const failed: Record<string, string> = {};
      for (const [r, names] of v.rejected) for (const n of names) failed[n] = `${r.rule}: ${r.reason}`;
      return { ...decision('explain', args, v), nodes: candidates.length, passed: { count: v.passed.length, sample: v.passed }, failed };
    },
  };
}
