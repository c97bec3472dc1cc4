import type { Logger } from 'pino';
import type { Actuator } from '../actuator/actuator.js';
import { pendingPod, slimNode, unshared } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import { pickPodsToRemove, type PickResult } from '../placement/downscale.js';
import { filterNodes, rejectAll as waitVerdict } from '../placement/filtering.js';
import { podModel } from '../placement/model.js';
import { scoreNodes } from '../placement/scoring.js';
import { candidatesNamed, clipReason, rejectedCount, type Candidates, type FilterVerdict } from '../placement/verdict.js';
import { PlacementState } from './placementState.js';
import { DecisionLog, summarizeRejections, type Decision } from './decisions.js';
import { encodeError, encodeFilterResult, encodePriorities } from './encoding.js';
import { instanceIdStep } from './instanceIds.js';
import { maxCandidates, namesMode, type ExtenderArgs, type RawObject } from './protocol.js';

export const NOT_SYNCED = 'zonekeeper: cluster cache not synced yet; the pod will be retried';
export const STALE = 'zonekeeper: cluster cache is stale (watches failing); the pod will be retried';

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
 * The extender verbs over the cache: each request builds the pod's workload model once, asks
 * placement for a verdict, lets the placement state carry out its effects, and records the
 * decision.
 */
export function createExtender(deps: ExtenderDeps) {
  const { source, actuator, metrics, log, config } = deps;
  const clock = deps.clock ?? Date;
  const state = new PlacementState(config, source, actuator, metrics, log, clock);
  const { settings } = state;
  const decisions = new DecisionLog(config.debug.decisionsKeptPods, config.debug.decisionsPerPod, config.debug.decisionsMaxBytes);
  const ids = instanceIdStep(source.snapshot, actuator, log);
  source.store.onPod((type, pod) => {
    if (type === 'delete') ids.forget(pod.uid);
  });

  function candidatesOf(args: ExtenderArgs): Candidates {
    if (namesMode(args)) return candidatesNamed(args.NodeNames!, source.snapshot);
    const items = args.Nodes?.items ?? [];
    return { names: items.map((raw) => raw.metadata.name), nodes: items.map((raw) => slimNode(raw, unshared)) };
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
      const pod = pendingPod(args.Pod);
      const asked = state.inputOf(pod, candidates);
      const model = podModel(pod, source.snapshot, settings, asked);
      const ensured = await ids.ensure(pod, model);
      // The instance-ID step may have given the pod its ID: the same inputs, with that pod.
      const input = ensured.pod === pod ? asked : { ...asked, pod: ensured.pod };
      const v = ensured.error === undefined ? filterNodes(input, model)
        : waitVerdict(candidates, { rule: 'zone-pin', reason: ensured.error, unresolvable: false }, model);
      state.apply(input, v);
      const d = decision('filter', args, v);
      decisions.record(d);
      metrics.decisions.inc({ verb: 'filter', outcome: d.outcome });
      if (log.isLevelEnabled('debug')) log.debug({ pod: d.pod, outcome: d.outcome, passed: d.passed.count, nodes: d.nodes }, v.summary);
      // A wait that ends with time, not with a cluster event: an error makes kube-scheduler
      // retry with its backoff, where "no node fits" would park the pod for minutes.
      if (v.passed.length === 0 && v.retryAfterMs !== undefined) {
        return encodeError(`zonekeeper: ${clipReason(v.summary)} (retry in ${Math.ceil(v.retryAfterMs / 1000)}s)`);
      }
      return encodeFilterResult(v, namesMode(args) ? undefined : args.Nodes?.items ?? [], config.extender);
    },

    /** The HostPriorityList as JSON text. */
    prioritize(args: ExtenderArgs): string {
      const candidates = candidatesOf(args);
      if (!source.ready()) {
        metrics.decisions.inc({ verb: 'prioritize', outcome: 'not_ready' });
        return encodePriorities(candidates, []);
      }
      const input = state.inputOf(ids.known(pendingPod(args.Pod)), candidates);
      const v = filterNodes(input);
      const scores = scoreNodes(input, v);
      const d = decision('prioritize', args, v, { scores: Object.fromEntries(scores.slice(0, 50).map((score, i) => [candidates.names[i], score])) });
      decisions.record(d);
      metrics.decisions.inc({ verb: 'prioritize', outcome: d.outcome });
      return encodePriorities(candidates, scores);
    },

    /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
    pickPodsToRemove(namespace: string, n: number, candidates: string[]): PickResult | undefined {
      if (!source.synced()) {
        metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: 'not_ready' });
        return undefined;
      }
      const answer = pickPodsToRemove(namespace, n, candidates, source.snapshot, settings, state);
      metrics.decisions.inc({ verb: 'downscale-pod-picker', outcome: answer.warnings ? 'warnings' : 'picked' });
      log.debug({ namespace, n, candidates: candidates.length, chosen: answer.chosen_pods, tied: answer.tied_pods }, 'downscale pod picker');
      return answer;
    },

    /** A dry-run filter of a cached pod against every cached node: nothing is reserved or written. */
    explain(namespace: string, name: string): (Decision & { failed: Record<string, string> }) | undefined {
      const raw = source.snapshot.pod(namespace, name);
      if (!raw) return undefined;
      const all = [...source.snapshot.nodes()];
      const candidates: Candidates = { names: all.map((n) => n.name), nodes: all };
      const v = filterNodes(state.inputOf(raw, candidates));
      const args: ExtenderArgs = { Pod: { metadata: { name, namespace, uid: raw.uid } }, NodeNames: [] };
      const failed: Record<string, string> = {};
      for (const [r, names] of v.rejected) for (const n of names) failed[n] = `${r.rule}: ${r.reason}`;
      return { ...decision('explain', args, v), nodes: all.length, passed: { count: v.passed.length, sample: [...v.passed] }, failed };
    },
  };
}
