import type { Logger } from 'pino';
import type { Actuator } from '../actuator/actuator.js';
import type { PendingPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Snapshot } from '../cluster/store.js';
import { systemClock, type Clock } from '../common/clock.js';
import type { Config } from '../common/config.js';
import type { Metrics } from '../metrics/metrics.js';
import { filterNodes } from '../placement/filtering.js';
import { podModel, type WorkloadModel } from '../placement/model.js';
import type { Candidates, PlacementInput } from '../placement/policy.js';
import { rejectAll as waitVerdict, type FilterVerdict } from '../placement/verdict.js';
import { instanceIdStep } from './instanceIdStep.js';
import { PlacementState } from './placementState.js';

// The one decision (docs/design.md#data-flow): a pending pod and the cluster view in, the verdict
// and its effects out. Built only by the decision service (service.ts), once: every transport
// reaches it through the service, and builds its input here and nowhere else.

/** The nodes a decision is made over: their names, and the nodes themselves only if a policy reads them. */
export interface CandidateNodes {
  names: readonly string[];
  /** The nodes behind `names`: looked up only for a pod some policy places. */
  resolve(): Candidates;
}

/** How a transport asks. */
export interface DecisionAsk {
  /** The decision is written into the pod's spec (the gate): zones the pod can grow into are offered. */
  writesSpec?: boolean;
  /**
   * Claim the pod's instance ID first, durably (the conditional write on its workload is the
   * lock between replicas, seed 000): `annotate` writes the ID onto the pod too, else the
   * transport writes it (the gate's patch). Without it, a dry run: the known ID only.
   */
  claimId?: { annotate: boolean };
  /**
   * Whether the verdict's effects are carried out, asked the moment it is reached: in the same
   * turn of the event loop, so that the next decision sees its reservation (decisions that
   * interleave would both take the same room).
   */
  commit?: (d: Decided) => boolean;
}

export interface Decided {
  input: PlacementInput;
  model: WorkloadModel | undefined;
  verdict: FilterVerdict;
  /** An ID this process gave the pod that the pod does not carry yet (the gate writes it). */
  givenId: number | undefined;
  /** The instance-ID claim failed: the verdict waits, and this says why. */
  idError: string | undefined;
}

export interface DecisionCoreDeps {
  source: SnapshotSource;
  actuator: Actuator;
  metrics: Metrics;
  log: Logger;
  config: Config;
  clock?: Clock;
}

/** What the service is built on; only service.ts builds one. */
export type DecisionCore = ReturnType<typeof decisionCore>;

export function decisionCore(deps: DecisionCoreDeps) {
  const { source, actuator, metrics, log, config } = deps;
  const state = new PlacementState(config, source, actuator, metrics, log, deps.clock ?? systemClock);
  const ids = instanceIdStep(source.snapshot, actuator, log);
  source.store.onPod((type, pod) => {
    if (type === 'delete') ids.forget(pod.uid);
  });

  /**
   * The input builder: the pod's workload model, and the input its policy reads. Only a policy
   * that places the pod reads nodes: an unmanaged pod (most pods kube-scheduler sends) or one
   * waiting for its workload gets a verdict over the names alone, without a lookup per name.
   */
  function prepare(pod: PendingPod, nodes: CandidateNodes, ask: DecisionAsk,
    snapshot = source.snapshot): { input: PlacementInput; model: WorkloadModel | undefined } {
    const asked = { ...state.inputOf(pod, { names: nodes.names, nodes: [] }, ask.writesSpec), snapshot };
    const model = podModel(pod, snapshot, state.settings, { pendingFreezes: asked.pendingFreezes, forPlacement: true });
    const placing = model !== undefined && model.policy !== 'none' && model.policy !== 'wait';
    return { input: placing ? { ...asked, candidates: nodes.resolve() } : asked, model };
  }

  /**
   * Decides synchronously with the pod's known instance ID: a dry run, or a verb that never
   * claims one; over `snapshot` when given (the cluster less preemption's victims).
   */
  function decideNow(pod: PendingPod, nodes: CandidateNodes, ask: DecisionAsk = {}, snapshot?: Snapshot): Decided {
    const { input, model } = prepare(ids.known(pod), nodes, ask, snapshot);
    return { input, model, verdict: filterNodes(input, model), givenId: undefined, idError: undefined };
  }

  /**
   * Decides, claiming the pod's instance ID first when its policy pins by one (the one write
   * inside a decision); carries out the verdict's effects (reservations and waits in memory, list
   * freezes queued to the actuator) when `ask.commit` says so.
   */
  async function decide(pod: PendingPod, nodes: CandidateNodes, ask: DecisionAsk): Promise<Decided> {
    const request = ids.known(pod);
    let { input, model } = prepare(request, nodes, ask);
    // An ID this process gave the pod (now, or before a write that did not land) that it does not carry.
    let givenId = pod.instanceId < 0 && request.instanceId >= 0 ? request.instanceId : undefined;
    let idError: string | undefined;
    if (ask.claimId && ids.needsId(request, model)) {
      const ensured = await ids.ensure(request, model, ask.claimId.annotate);
      idError = ensured.error;
      if (ensured.error === undefined && ensured.assigned) givenId = ensured.pod.instanceId;
      // Everything is read again after the write: nothing decided before an await is used after it.
      ({ input, model } = prepare(ensured.pod, nodes, ask));
    }
    const verdict = idError === undefined ? filterNodes(input, model)
      : waitVerdict(input.candidates, { rule: 'zone-pin', reason: idError, unresolvable: false }, model);
    const decided = { input, model, verdict, givenId, idError };
    if (ask.commit?.(decided)) state.apply(input, verdict);
    return decided;
  }

  return {
    /** Reservations, waits, conflicts and the settings: what decisions remember, and the debug views read. */
    state,
    settings: state.settings,
    /** The pod with the instance ID this process knows for it. */
    known: ids.known,
    decide,
    decideNow,
  };
}
