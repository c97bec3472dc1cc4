import { slimPod, unshared } from '../cluster/convert.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../common/config.js';
import { subsetPatched, type JsonPatchOp } from '../placement/subsetPatch.js';
import type { CandidateNodes, DecisionCore, Decided } from './core.js';
import type { DecisionRecorder } from './recording.js';
import { schedulableNodes, specDecisionOf, volumeStillMoving, type SpecDecision } from './spec.js';

// The decisions written into a pod's spec (docs/design.md#transports): admission's for a
// pod being created, the gate keeper's for a gated pod, and the same decision asked without acting
// (the policy check, the seat table). Each reads readiness, decides over the schedulable nodes,
// commits what it writes and records; the transports only decode and encode.

type Raw = Record<string, any>;

/** A subset's decision with its `patch` applied to the pod as created: the operations, and the pod they give. */
interface SubsetPatched { ops: JsonPatchOp[]; pod: Raw }

/** What admission does with a pod being created. */
type AdmissionDecision =
  | Exclude<SpecDecision, { kind: 'wait' | 'subset' }>
  | (Extract<SpecDecision, { kind: 'subset' }> & { patched?: SubsetPatched })
  /** Add the zone gate: the keeper decides it. */
  | { kind: 'gate'; why: string }
  /** Refuse the pod: what its creator asked cannot be written (a subset's patch that does not apply). */
  | { kind: 'refused'; why: string };

interface AdmissionAsk {
  /** The pod as created (named, if the API server had not named it yet): a subset's patch is applied to it. */
  created: Raw;
  /** Nothing reserved, claimed or written; the decision as if it were. */
  dryRun: boolean;
  /** This replica holds the Lease (or runs alone): only it decides what reads shared counters. */
  leading: boolean;
}

export interface SpecVerbs {
  /** Admission's decision for a pod being created, committed unless a dry run; recorded (verb admission). */
  admit(pod: SlimPod, ask: AdmissionAsk): Promise<AdmissionDecision>;
  /** The gate keeper's decision for a gated pod, committed when written; recorded (verb gate). */
  ungate(pod: SlimPod): Promise<SpecDecision>;
  /** What admission would decide for the pod now, as the Lease holder; nothing committed, nothing recorded. */
  wouldAdmit(pod: SlimPod): AdmissionDecision;
  /**
   * The zone admission would write for a StatefulSet's ordinal whose pod mounts `claims` (those
   * that exist), whatever room the zone has now; undefined where it would write none (a gate, a
   * subset, a volume spanning zones): the seat table publishes this and nothing else.
   */
  seatOf(w: SlimWorkload, ordinal: number, claims: readonly string[]): string | undefined;
}

export interface SpecDeps {
  source: SnapshotSource;
  core: DecisionCore;
  recorder: DecisionRecorder;
  config: Pick<Config, 'workloadSpread'>;
  notReady(): string | undefined;
}

/** No nodes: a seat's zone is the pin's and its volumes', not the room a zone has now. */
const NO_NODES: CandidateNodes = { names: [], resolve: () => ({ names: [], nodes: [] }) };

/** The pod a StatefulSet's controller would create for `ordinal`, as admission reads it: its name, owner, ordinal label and claims. */
function ordinalPod(w: SlimWorkload, ordinal: number, claims: readonly string[]): SlimPod {
  return slimPod({
    metadata: {
      name: `${w.name}-${ordinal}`, namespace: w.namespace, uid: `seat/${w.uid}/${ordinal}`, labels: { 'apps.kubernetes.io/pod-index': String(ordinal) },
      ownerReferences: [{ apiVersion: w.apiVersion, kind: 'StatefulSet', name: w.name, uid: w.uid, controller: true }],
    },
    spec: { volumes: claims.map((claimName, i) => ({ name: `claim-${i}`, persistentVolumeClaim: { claimName } })) },
  }, unshared);
}

export function specVerbs({ source, core, recorder, config, notReady }: SpecDeps): SpecVerbs {
  // zonekeeper owns WorkloadSpreads (no OpenKruise): admission applies subsets' patches, and its controller reschedules an Adaptive subset's pods.
  const ownsSubsets = config.workloadSpread.writeStatus;

  /** Why a decision to write into this pod's spec must wait: the cache not ready, or a volume that may still move (a written zone cannot be taken back). */
  const specWaits = (pod: SlimPod) => notReady() ?? volumeStillMoving(pod, source.snapshot);

  // The Ready, schedulable nodes a decision written into the spec is made over: built once per change of the nodes, not per pod.
  let schedulable: CandidateNodes | undefined;
  source.store.onNode(() => { schedulable = undefined; });
  function schedulableNow(): CandidateNodes {
    if (!schedulable) {
      const candidates = { ...schedulableNodes(source.snapshot), memo: new Map() };
      schedulable = { names: candidates.names, resolve: () => candidates };
    }
    return schedulable;
  }

  /** The verdict's decision, waiting while its instance ID could not be claimed; an ID just given goes in the same write as the zone it pins. */
  function written(x: Decided): SpecDecision {
    if (x.idError !== undefined) return { kind: 'wait', why: x.idError };
    const g = specDecisionOf(x.verdict, x.input);
    return g.kind === 'zone' && x.givenId !== undefined ? { ...g, instanceId: x.givenId } : g;
  }

  /** Admission's answer for a decided pod: written now, or the gate for the keeper (a wait; a fallback it must watch). */
  function admitted(x: Decided): Exclude<AdmissionDecision, { kind: 'refused' }> {
    if (!x.verdict.managed) return { kind: 'as-is', why: x.verdict.summary };
    const g = written(x);
    // A pod lifted under an adaptive fallback is the keeper's to watch, except an Adaptive subset's when zonekeeper reschedules it as Kruise's controller does.
    const watched = g.kind !== 'wait' && g.kind !== 'as-is' && !!g.fallback && !(g.kind === 'subset' && ownsSubsets);
    return g.kind === 'wait' || watched ? { kind: 'gate', why: g.why } : g;
  }

  function dryAdmission(pod: SlimPod, leading: boolean, nodes = schedulableNow()): Exclude<AdmissionDecision, { kind: 'refused' }> {
    const waits = specWaits(pod);
    if (waits) return { kind: 'gate', why: waits };
    const dry = core.decideNow(pod, nodes, { writesSpec: true });
    if (!dry.verdict.managed) return { kind: 'as-is', why: dry.verdict.summary };
    if (!leading) return { kind: 'gate', why: 'this replica does not hold the Lease: the zone gate keeper decides it' };
    const noId = dry.model?.seats === 'instance-id' && pod.instanceId < 0;
    return noId ? { kind: 'gate', why: 'a dry run takes no instance ID' } : admitted(dry);
  }

  /** A subset's patch applied to the pod as created (zonekeeper owning WorkloadSpreads), or why it cannot be. */
  function withPatch(d: Exclude<AdmissionDecision, { kind: 'refused' }>, pod: SlimPod, created: Raw): AdmissionDecision {
    if (d.kind !== 'subset' || !ownsSubsets || !d.patch) return d;
    const patched = subsetPatched(created, d.patch);
    if (patched.error !== undefined) {
      return { kind: 'refused', why: `zonekeeper: WorkloadSpread ${pod.namespace}/${d.workloadSpread} subset ${d.subset}: its patch cannot be applied: ${patched.error}` };
    }
    return { ...d, patched: { ops: patched.ops, pod: patched.pod } };
  }

  return {
    /**
     * Only the Lease holder decides (quotas, zone limits, instance IDs and list freezes are counted
     * in one place); a pod that cannot be decided now gets the zone gate, and the keeper decides it.
     * Every outcome is counted; a decision written is kept with its verdict (outcome admitted).
     */
    async admit(pod, ask) {
      const waits = specWaits(pod);
      if (waits || !ask.leading || ask.dryRun) {
        const d = withPatch(waits ? { kind: 'gate', why: waits } : dryAdmission(pod, ask.leading), pod, ask.created);
        if (d.kind === 'gate' || d.kind === 'as-is' || d.kind === 'refused') recorder.count('admission', d.kind);
        return d;
      }
      // One decision, its effects carried out in the same turn (the next review sees its reservation); a refused pod reserves nothing.
      const reached: { d?: AdmissionDecision } = {};
      const decided = await core.decide(pod, schedulableNow(), {
        writesSpec: true, claimId: { annotate: false },
        commit: (x) => {
          const d = (reached.d = withPatch(admitted(x), pod, ask.created));
          return x.verdict.managed && d.kind !== 'gate' && d.kind !== 'refused';
        },
      });
      const d = reached.d ?? withPatch(admitted(decided), pod, ask.created);
      if (d.kind === 'zone' || d.kind === 'subset') recorder.record('admission', pod, decided.verdict, { outcome: 'admitted' });
      else recorder.count('admission', d.kind);
      return d;
    },

    /** The filter's policy code over the schedulable cached nodes; an instance ID is assigned first, as the filter does; nothing decided blind. */
    async ungate(pod) {
      const waits = specWaits(pod);
      if (waits) return { kind: 'wait', why: waits };
      const decided = await core.decide(pod, schedulableNow(), {
        writesSpec: true, claimId: { annotate: false }, commit: (x) => written(x).kind !== 'wait',
      });
      const d = written(decided);
      recorder.record('gate', pod, decided.verdict, { outcome: d.kind === 'wait' ? 'waiting' : 'ungated' });
      return d;
    },

    wouldAdmit: (pod) => dryAdmission(pod, true),

    seatOf(w, ordinal, claims) {
      const d = dryAdmission(ordinalPod(w, ordinal, claims), true, NO_NODES);
      return d.kind === 'zone' ? d.zone : undefined;
    },
  };
}
