import { pendingPod, slimNode, unshared } from '../cluster/convert.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { pickPodsToRemove } from '../placement/downscale.js';
import { candidatesNamed, clipReason, type Candidates } from '../placement/policy.js';
import { passedInOrder, scoreAllowed, scoreNodes } from '../placement/scoring.js';
import type { FilterVerdict } from '../placement/verdict.js';
import { withoutPods } from '../placement/withoutPods.js';
import type { CandidateNodes } from '../decision/core.js';
import type { DecisionService, PodRef } from '../decision/service.js';
import { maxCandidates, namesMode, type ExtenderArgs } from './wire/args.js';
import { encodeError, encodeFilterResult, encodePriorities, quotedNames } from './wire/encoding.js';
import type { AnsweredNames } from './wire/namesSection.js';
import { pickResult, type PickResult } from './wire/picker.js';
import { encodePreemptionResult, type MetaVictims, type PreemptionArgs } from './wire/preemption.js';
import type { RawObject } from './wire/validation.js';

/** What the extender reads besides the decision service. */
export interface ExtenderDeps {
  source: SnapshotSource;
  log: Logger;
  config: Pick<Config, 'extender'>;
}

/** What server/ reaches the extender through: its verbs. */
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
}

/** The pod a request is about, named as its wire names it. */
function podOf(args: Pick<ExtenderArgs, 'Pod'>): PodRef {
  const meta = args.Pod.metadata as RawObject;
  return { namespace: String(meta.namespace ?? 'default'), name: String(meta.name), uid: String(meta.uid) };
}

/**
 * The extender's verbs over the decision service: each request's nodes and pod decoded from the
 * wire, decided by the service, the answer encoded, the decision recorded.
 */
export function createExtender(service: DecisionService, deps: ExtenderDeps): ExtenderService {
  const { source, log, config } = deps;

  /** The names a request sends, as sent. */
  function namesOf(args: ExtenderArgs): readonly string[] {
    return namesMode(args) ? args.NodeNames! : (args.Nodes?.items ?? []).map((raw) => raw.metadata.name);
  }

  /** The request's nodes: its Node objects, else the cache's (by slot, see NodeSlots.resolve). */
  function candidatesOf(args: ExtenderArgs, names: readonly string[]): Candidates {
    if (namesMode(args)) return candidatesNamed(names, source.snapshot);
    return { names, nodes: (args.Nodes?.items ?? []).map((raw) => slimNode(raw, unshared)) };
  }

  /** A request's nodes as the decision service takes them: looked up only if a policy places the pod. */
  const nodesOf = (args: ExtenderArgs, names = namesOf(args)): CandidateNodes => ({ names, resolve: () => candidatesOf(args, names) });
  const resolved = (candidates: Candidates): CandidateNodes => ({ names: candidates.names, resolve: () => candidates });
  const modeOf = (args: ExtenderArgs) => (namesMode(args) ? 'NodeNames' as const : 'Nodes' as const);

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

  return {
    maxCandidates: () => maxCandidates(source.snapshot.nodeCount()),
    *answeredNames(): Iterable<AnsweredNames> {
      for (const kept of cycleVerdicts.values()) yield kept.answered;
    },

    /** The ExtenderFilterResult as JSON text (see encoding.ts for why not an object). */
    async filter(args: ExtenderArgs): Promise<string> {
      const mode = modeOf(args);
      const notReady = service.notReady();
      if (notReady) {
        // Fail safe: a pinned pod is never placed on a cache that may be wrong.
        service.record('filter', podOf(args), undefined, { mode, error: notReady });
        return encodeError(notReady);
      }
      const decided = await service.decide(pendingPod(args.Pod), nodesOf(args), { claimId: { annotate: true }, commit: () => true });
      const v = decided.verdict;
      const answered = namesMode(args) ? keepForPrioritize(decided.input.pod.uid, v) : undefined;
      const d = service.record('filter', podOf(args), v, { mode });
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
      if (service.notReady()) {
        service.count('prioritize', 'not_ready');
        return '[]';
      }
      const mode = modeOf(args);
      const pod = service.known(pendingPod(args.Pod));
      const names = namesOf(args);
      // After its filter: the cycle's verdict, and no lookup per name.
      const kept = namesMode(args) ? cycleVerdicts.get(pod.uid)?.verdict : undefined;
      cycleVerdicts.delete(pod.uid);
      const allowed = kept && passedInOrder(names, kept.passed);
      if (kept && allowed) {
        const scores = scoreAllowed(allowed, kept, pod.uid, (i) => source.snapshot.node(names[i]!));
        service.record('prioritize', podOf(args), kept, {
          mode, nodes: names.length, passed: { count: names.length, sample: names.slice(0, 20) }, scores: firstScores(names, scores),
        });
        return encodePriorities(names, scores, () => !kept.passedUnknown);
      }
      const { input, verdict: v } = service.decideNow(pod, nodesOf(args, names));
      const scores = scoreNodes(input, v);
      service.record('prioritize', podOf(args), v, { mode, scores: firstScores(names, scores) });
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
      const notReady = service.notReady();
      if (notReady) {
        service.record('preempt', podOf(args), undefined, { mode: 'NodeNames', error: notReady });
        return encodePreemptionResult(new Map());
      }
      const pod = pendingPod(args.Pod);
      const v = service.decideNow(pod, resolved(candidatesNamed(names, source.snapshot))).verdict;
      const passed = new Set(v.passed);
      const replay = new Set<string>();
      for (const [r, rejected] of v.rejected) if (!r.unresolvable && r.rule !== 'cache') for (const n of rejected) replay.add(n);
      const kept = new Map<string, MetaVictims>();
      for (const [node, victims] of args.candidates) {
        if (passed.has(node)) kept.set(node, victims);
        else if (replay.has(node) && victims.Pods.length > 0) {
          const without = withoutPods(source.snapshot, new Set(victims.Pods.map((p) => p.UID)));
          const again = service.decideNow(pod, resolved(candidatesNamed([node], without)), {}, without).verdict;
          if (again.passed.includes(node)) kept.set(node, victims);
        }
      }
      service.record('preempt', podOf(args), v, { mode: 'NodeNames', passed: { count: kept.size, sample: [...kept.keys()].slice(0, 20) } });
      return encodePreemptionResult(kept);
    },

    /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
    pickPodsToRemove(namespace: string, n: number, candidates: readonly string[]): PickResult | undefined {
      if (!source.synced()) {
        service.count('downscale-pod-picker', 'not_ready');
        return undefined;
      }
      const pick = pickPodsToRemove(namespace, n, candidates, source.snapshot, service.settings, service.state);
      service.count('downscale-pod-picker', pick.warnings.length > 0 ? 'warnings' : 'picked');
      log.debug({ namespace, n, candidates: candidates.length, chosen: pick.chosen, tied: pick.tied }, 'downscale pod picker');
      return pickResult(pick);
    },
  };
}
