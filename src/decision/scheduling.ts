import type { PendingPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import { pickPodsToRemove, type PodPick } from '../placement/downscale.js';
import { candidatesNamed, type Candidates } from '../placement/policy.js';
import { passedInOrder, scoreAllowed, scoreNodes } from '../placement/scoring.js';
import type { FilterVerdict } from '../placement/verdict.js';
import { withoutPods } from '../placement/withoutPods.js';
import type { CandidateNodes, DecisionCore } from './core.js';
import type { DecisionRecorder } from './recording.js';

// kube-scheduler's verbs over the one decision (docs/design.md#transports): each reads
// readiness, decides, carries out what the filter commits, and records; the extender only decodes
// its wire and encodes these answers.

/** How kube-scheduler sent the nodes: their names (the cache's nodes), or whole Node objects. */
type NodesMode = 'NodeNames' | 'Nodes';

type FilterAnswer =
  /** The cache is not ready: no pinned pod is placed on a cache that may be wrong. */
  | { kind: 'not-ready'; why: string }
  | { kind: 'verdict'; verdict: FilterVerdict };

interface PrioritizeAnswer {
  /** Scores in the order of the names sent. */
  scores: number[];
  /** Whether the node at an index is one the decision knows (unknown ones are scored 0 and left out). */
  known(i: number): boolean;
}

export interface SchedulingVerbs {
  /** The filter: decides and commits (an instance ID claimed and annotated, the reservation made), records. */
  filter(pod: PendingPod, nodes: CandidateNodes, mode: NodesMode): Promise<FilterAnswer>;
  /** Prioritize: scores the nodes, from the cycle's filter verdict when the transport kept one; nothing committed. Undefined: the cache is not ready. */
  prioritize(pod: PendingPod, nodes: CandidateNodes, mode: NodesMode, kept?: FilterVerdict): PrioritizeAnswer | undefined;
  /** Preemption: of the candidate nodes (each with its victims' UIDs), those the pod may use once its victims are gone. */
  preempt(pod: PendingPod, candidates: ReadonlyMap<string, readonly string[]>): ReadonlySet<string> | undefined;
  /** KEP-3189 pod picker over the cache; undefined until the cache has synced. */
  pickPodsToRemove(namespace: string, n: number, candidates: readonly string[]): PodPick | undefined;
}

export interface SchedulingDeps {
  source: SnapshotSource;
  core: DecisionCore;
  recorder: DecisionRecorder;
  notReady(): string | undefined;
}

// Pairs, not an object keyed by name (docs/performance.md#why-the-code-is-shaped-this-way).
const firstScores = (names: readonly string[], scores: number[]) => scores.slice(0, 50).map((score, i) => ({ node: names[i]!, score }));
const resolved = (candidates: Candidates): CandidateNodes => ({ names: candidates.names, resolve: () => candidates });

export function schedulingVerbs({ source, core, recorder, notReady }: SchedulingDeps): SchedulingVerbs {
  return {
    async filter(pod, nodes, mode) {
      const why = notReady();
      if (why) {
        recorder.record('filter', pod, undefined, { mode, error: why });
        return { kind: 'not-ready', why };
      }
      const decided = await core.decide(pod, nodes, { claimId: { annotate: true }, commit: () => true });
      recorder.record('filter', pod, decided.verdict, { mode });
      return { kind: 'verdict', verdict: decided.verdict };
    },

    prioritize(pod, nodes, mode, kept) {
      if (notReady()) {
        recorder.count('prioritize', 'not_ready');
        return undefined;
      }
      const known = core.known(pod);
      const { names } = nodes;
      // After its filter: the cycle's verdict, and no lookup per name.
      const allowed = kept && passedInOrder(names, kept.passed);
      if (kept && allowed) {
        const scores = scoreAllowed(allowed, kept, known.uid, (i) => source.snapshot.node(names[i]!));
        recorder.record('prioritize', known, kept, {
          mode, nodes: names.length, passed: { count: names.length, sample: names.slice(0, 20) }, scores: firstScores(names, scores),
        });
        return { scores, known: () => !kept.passedUnknown };
      }
      const { input, verdict } = core.decideNow(known, nodes);
      const scores = scoreNodes(input, verdict);
      recorder.record('prioritize', known, verdict, { mode, scores: firstScores(names, scores) });
      const candidates = input.candidates.nodes;
      return { scores, known: (i) => candidates[i] !== undefined };
    },

    /**
     * Preemption (docs/design.md#preemption): a node the decision passes is kept; one only an
     * unresolvable rule rejects (a pin, a volume, the pod's own affinity) is dropped, whatever
     * victims it offers; one a resolvable rule rejects (a quota, a limit, spreading) is decided
     * again over the cluster without its victims, and kept only if the pod then fits there.
     * Nothing is reserved; on a cache that is not ready no candidate is kept.
     */
    preempt(pod, candidates) {
      const why = notReady();
      if (why) {
        recorder.record('preempt', pod, undefined, { mode: 'NodeNames', error: why });
        return undefined;
      }
      const names = [...candidates.keys()];
      const v = core.decideNow(pod, resolved(candidatesNamed(names, source.snapshot))).verdict;
      const passed = new Set(v.passed);
      const replay = new Set<string>();
      for (const [r, rejected] of v.rejected) if (!r.unresolvable && r.rule !== 'cache') for (const n of rejected) replay.add(n);
      const kept = new Set<string>();
      for (const [node, victims] of candidates) {
        if (passed.has(node)) kept.add(node);
        else if (replay.has(node) && victims.length > 0) {
          const without = withoutPods(source.snapshot, new Set(victims));
          const again = core.decideNow(pod, resolved(candidatesNamed([node], without)), {}, without).verdict;
          if (again.passed.includes(node)) kept.add(node);
        }
      }
      recorder.record('preempt', pod, v, { mode: 'NodeNames', passed: { count: kept.size, sample: [...kept].slice(0, 20) } });
      return kept;
    },

    pickPodsToRemove(namespace, n, candidates) {
      if (!source.synced()) {
        recorder.count('downscale-pod-picker', 'not_ready');
        return undefined;
      }
      const pick = pickPodsToRemove(namespace, n, candidates, source.snapshot, core.settings, core.state);
      recorder.count('downscale-pod-picker', pick.warnings.length > 0 ? 'warnings' : 'picked');
      return pick;
    },
  };
}
