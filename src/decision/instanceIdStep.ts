import type { Logger } from 'pino';
import { ExpiringMap } from '../common/expiringMap.js';
import type { Actuator } from '../actuator/actuator.js';
import type { PendingPod } from '../cluster/objects.js';
import { workloadKindSpec, type WorkloadKind } from '../cluster/kinds.js';
import type { Snapshot } from '../cluster/store.js';
import { instanceSeats, livePodIn, rolloutSeat } from '../placement/instanceSeats.js';
import { policyOf, type WorkloadModel } from '../placement/model.js';

/**
 * `successor`: placed for the ID of the pod it replaces in a rollout, without holding it yet;
 * `assigned`: an ID was given now (and, unless asked not to, written onto the pod).
 */
export type Ensured = { pod: PendingPod; error?: undefined; successor?: boolean; assigned?: boolean } | { pod: PendingPod; error: string };

/**
 * The first filter of a pod of an instance-ID workload assigns its ID before placement
 * (docs/design.md#instance-ids). Known IDs come from the request's pod, the cached pod, or an assignment this
 * process just made (the scheduler's copy of the pod lags behind our write).
 */
export function instanceIdStep(snapshot: Snapshot, actuator: Actuator, log: Logger) {
  const assigned = new ExpiringMap<string, number>({ max: 100_000, ttlMs: 3_600_000 });

  function known(pod: PendingPod): PendingPod {
    if (pod.instanceId >= 0) return pod;
    const id = assigned.get(pod.uid) ?? snapshot.podByUid(pod.uid)?.instanceId ?? -1;
    return id >= 0 ? { ...pod, instanceId: id } : pod;
  }

  /** Whether the pod (as `known` gives it) must take an ID first: only a pin by instance ID (no WorkloadSpread, not ignored) does. */
  function needsId(pod: PendingPod, model: WorkloadModel | undefined): boolean {
    // A pod of a ReplicaSet (a Deployment's), a CloneSet or a standalone ReplicaSet.
    const owner = pod.owner && workloadKindSpec(pod.owner.kind);
    if (pod.instanceId >= 0 || !owner || owner.ordinals || owner.podsOwnedVia) return false;
    return model !== undefined && policyOf(model)?.pinsSeats === true && model.seats === 'instance-id';
  }

  /**
   * Assigns and writes the pod's ID; `pod` needs one (needsId). While every ID is held or due
   * to a placed pod (a rollout's surge), nothing is written: the pod is placed for the ID of
   * the pod it replaces (rolloutSeat) and the leader hands it that ID once it is free.
   */
  async function ensure(pod: PendingPod, model: WorkloadModel | undefined, annotatePod = true): Promise<Ensured> {
    if (!needsId(pod, model) || !model?.workload) return { pod };
    const ns = pod.namespace;
    const seats = instanceSeats(model, snapshot, pod.name);
    const reserved = new Set(seats.due.values());
    if (seats.free.length <= reserved.size) {
      const successorOf = rolloutSeat(model, pod, seats, snapshot);
      if (successorOf !== undefined) return { pod: { ...pod, instanceId: successorOf }, successor: true };
    }
    try {
      const id = await actuator.assignInstanceId({
        owner: { kind: model.ref.kind as WorkloadKind, namespace: ns, name: model.ref.name },
        pod: pod.name,
        replicas: seats.replicas,
        live: livePodIn(snapshot, ns),
        choice: { held: seats.held, reserved },
        annotatePod,
      });
      assigned.set(pod.uid, id);
      log.info({ pod: `${ns}/${pod.name}`, instanceId: id }, 'instance ID assigned');
      return { pod: { ...pod, instanceId: id }, assigned: true };
    } catch (err) {
      const error = `instance ID for ${ns}/${pod.name}: ${(err as Error).message}`;
      log.warn({ pod: `${ns}/${pod.name}` }, error);
      return { pod, error };
    }
  }

  return { known, needsId, ensure, forget: (uid: string) => assigned.delete(uid) };
}
