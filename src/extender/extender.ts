import { pendingPod, slimNode, unshared } from '../cluster/convert.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { candidatesNamed, clipReason, type Candidates } from '../placement/policy.js';
import type { FilterVerdict } from '../placement/verdict.js';
import type { CandidateNodes } from '../decision/core.js';
import type { DecisionService } from '../decision/service.js';
import { maxCandidates, namesMode, type ExtenderArgs } from './wire/args.js';
import { encodeError, encodeFilterResult, encodePriorities, quotedNames } from './wire/encoding.js';
import type { AnsweredNames } from './wire/namesSection.js';
import { pickResult, type PickResult } from './wire/picker.js';
import { encodePreemptionResult, type PreemptionArgs } from './wire/preemption.js';
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

/** The pod a request is about, as its wire names it (for the log). */
function podName(args: Pick<ExtenderArgs, 'Pod'>): string {
  const meta = args.Pod.metadata as RawObject;
  return `${String(meta.namespace ?? 'default')}/${String(meta.name)}`;
}

/**
 * The extender's verbs over the decision service: each request's nodes and pod decoded from the
 * wire, one call to the service's scheduling verbs (which decide and record), the answer encoded.
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

  return {
    maxCandidates: () => maxCandidates(source.snapshot.nodeCount()),
    *answeredNames(): Iterable<AnsweredNames> {
      for (const kept of cycleVerdicts.values()) yield kept.answered;
    },

    /** The ExtenderFilterResult as JSON text (see encoding.ts for why not an object). */
    async filter(args: ExtenderArgs): Promise<string> {
      const answer = await service.scheduling.filter(pendingPod(args.Pod), nodesOf(args), modeOf(args));
      // Fail safe: a pinned pod is never placed on a cache that may be wrong.
      if (answer.kind === 'not-ready') return encodeError(answer.why);
      const v = answer.verdict;
      if (log.isLevelEnabled('debug')) log.debug({ pod: podName(args), policy: v.policy, passed: v.passed.length }, v.summary);
      // A wait that ends with time, not with a cluster event: an error makes kube-scheduler
      // retry with its backoff, where "no node fits" would park the pod for minutes.
      if (v.passed.length === 0 && v.retryAfterMs !== undefined) {
        return encodeError(`zonekeeper: ${clipReason(v.summary)} (retry in ${Math.ceil(v.retryAfterMs / 1000)}s)`);
      }
      const answered = namesMode(args) ? keepForPrioritize(String((args.Pod.metadata as RawObject).uid), v) : undefined;
      return encodeFilterResult(v, namesMode(args) ? undefined : args.Nodes?.items ?? [], config.extender, answered?.text);
    },

    /** The HostPriorityList as JSON text. */
    prioritize(args: ExtenderArgs): string {
      const pod = pendingPod(args.Pod);
      const names = namesOf(args);
      // After its filter: the cycle's verdict, and no lookup per name.
      const kept = namesMode(args) ? cycleVerdicts.get(pod.uid)?.verdict : undefined;
      cycleVerdicts.delete(pod.uid);
      const answer = service.scheduling.prioritize(pod, nodesOf(args, names), modeOf(args), kept);
      return answer ? encodePriorities(names, answer.scores, answer.known) : '[]';
    },

    /** Preemption (docs/design.md#preemption): of kube-scheduler's candidate nodes, those the pod may use once their victims are gone. */
    preempt(args: PreemptionArgs): string {
      const victims = new Map([...args.candidates].map(([node, v]) => [node, v.Pods.map((p) => p.UID)]));
      const kept = service.scheduling.preempt(pendingPod(args.Pod), victims);
      return encodePreemptionResult(new Map([...args.candidates].filter(([node]) => kept?.has(node))));
    },

    /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
    pickPodsToRemove(namespace: string, n: number, candidates: readonly string[]): PickResult | undefined {
      const pick = service.scheduling.pickPodsToRemove(namespace, n, candidates);
      if (pick) log.debug({ namespace, n, candidates: candidates.length, chosen: pick.chosen, tied: pick.tied }, 'downscale pod picker');
      return pick && pickResult(pick);
    },
  };
}
