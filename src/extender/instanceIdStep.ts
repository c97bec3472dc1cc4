import type { Logger } from 'pino';
import { ExpiringMap } from '../common/expiringMap.js';
import type { Actuator } from '../actuator/actuator.js';
import { holdsSeat, type PendingPod } from '../cluster/objects.js';
import { workloadKindSpec } from '../cluster/kinds.js';
import type { Snapshot } from '../cluster/store.js';
import { policyOf, type WorkloadModel } from '../placement/model.js';

export type Ensured = { pod: PendingPod; error?: undefined } | { pod: PendingPod; error: string };

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
    // The map lives on the pod's own controller: a ReplicaSet (a Deployment's) or a CloneSet.
    const owner = pod.owner && workloadKindSpec(pod.owner.kind);
    if (pod.instanceId >= 0 || !owner || owner.ordinals || owner.podsOwnedVia) return false;
    return model !== undefined && policyOf(model)?.pinsSeats === true && model.seats === 'instance-id';
  }

  /** Assigns and writes the pod's ID; `pod` needs one (needsId). */
  async function ensure(pod: PendingPod, model: WorkloadModel | undefined): Promise<Ensured> {
    if (!needsId(pod, model) || !model?.workload) return { pod };
    const owner = workloadKindSpec(pod.owner!.kind)!;
    const workload = model.workload;
    const ns = pod.namespace;
    try {
      const id = await actuator.assignInstanceId({
        owner: { kind: owner.kind, namespace: ns, name: pod.owner!.name },
        pod: pod.name,
        replicas: workload.replicas,
        live: (name) => {
          const p = snapshot.pod(ns, name);
          return !!p && holdsSeat(p);
        },
      });
      assigned.set(pod.uid, id);
      log.info({ pod: `${ns}/${pod.name}`, instanceId: id }, 'instance ID assigned');
      return { pod: { ...pod, instanceId: id } };
    } catch (err) {
      const error = `instance ID for ${ns}/${pod.name}: ${(err as Error).message}`;
      log.warn({ pod: `${ns}/${pod.name}` }, error);
      return { pod, error };
    }
  }

  return { known, needsId, ensure, forget: (uid: string) => assigned.delete(uid) };
}
