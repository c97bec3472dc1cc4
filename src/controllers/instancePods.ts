import type { Logger } from 'pino';
import { ANNOTATION } from '../cluster/annotations.js';
import type { WorkloadKind } from '../cluster/kinds.js';
import { instanceIdModel, instanceSeats, livePodIn } from '../placement/instanceSeats.js';
import type { ZoneListDeps } from '../placement/model.js';
import type { PlacementSettings } from '../placement/settings.js';
import type { Actuator } from '../actuator/actuator.js';
import type { PodAnnotator } from './podAnnotations.js';

/**
 * What the leader keeps on the pods of instance-ID workloads (docs/design.md#instance-ids):
 * zonekeeper.io/instance-count (the workload's replicas), and the ID a placed pod without one
 * is due once it is free (a rollout's surge pod gets the ID of the pod it replaced).
 */
export function instancePodAnnotator(actuator: Actuator, settings: PlacementSettings, lists: ZoneListDeps, log: Logger): PodAnnotator {
  /** Hand-overs under way: not queued again until done. */
  const assigning = new Set<string>();
  return {
    action: 'instance-count',
    annotation: ANNOTATION.instanceCount,
    current: (pod) => pod.instanceCount,
    *desired(snapshot, w) {
      const model = instanceIdModel(w, snapshot, settings, lists);
      if (!model) return;
      const value = String(model.workload.replicas);
      for (const pod of model.pods()) yield { pod, value };
    },
    // The ID due to a placed pod (a rollout's successor), handed on by the writes' queue, paced with the counts.
    *otherWrites(snapshot, w) {
      const model = instanceIdModel(w, snapshot, settings, lists);
      if (!model) return;
      const seats = instanceSeats(model, snapshot);
      const ns = model.ref.namespace;
      for (const [pod, id] of seats.due) {
        const key = `${ns}/${pod}`;
        if (assigning.has(key)) continue;
        const req = {
          owner: { kind: model.ref.kind as WorkloadKind, namespace: ns, name: model.ref.name },
          pod,
          replicas: seats.replicas,
          live: livePodIn(snapshot, ns),
          choice: { held: seats.held, prefer: id, reserved: new Set([...seats.due].filter(([p]) => p !== pod).map(([, i]) => i)) },
        };
        yield {
          key: `instance-id:${key}`,
          async write() {
            assigning.add(key);
            try {
              log.info({ pod: key, instanceId: await actuator.assignInstanceId(req), due: id }, 'instance ID handed to a placed pod');
            } catch (err) {
              log.warn({ pod: key, err: (err as Error).message }, 'instance ID not handed on; retried on the next change');
            } finally {
              assigning.delete(key);
            }
          },
        };
      }
    },
  };
}
