import { ANNOTATION } from '../cluster/annotations.js';
import { holdsSeat, zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { ownedThrough } from '../cluster/kinds.js';
import { deletionCosts } from './downscale.js';
import { idsForWaitingPods, type WaitingPod } from './instanceAssignment.js';
import { policyOf, workloadModel, type WorkloadModel, type ZoneListDeps } from './model.js';
import type { PlacementSettings } from './settings.js';
import { seatZone } from './zoneSequence.js';

// Who holds which instance ID among a workload's live pods, across all its ReplicaSets, and
// what a pod placed during a rollout gets (docs/design.md#instance-ids).

export interface InstanceSeats {
  replicas: number;
  /** ID → the live pod that carries it, for IDs below replicas. */
  held: Map<number, string>;
  /** The lowest IDs below replicas no live pod carries (enough of them for the waiting pods and one more). */
  free: number[];
  /** Placed, live pods without an ID, oldest first. */
  waiting: WaitingPod[];
  /** The free IDs the waiting pods are due, by pod name. */
  due: Map<string, number>;
  zoneOfId(id: number): string | undefined;
}

/** Whether a pod of the namespace, by name, is cached and holds a seat: what an assignment map's entry is checked against. */
export function livePodIn(snapshot: Snapshot, namespace: string): (pod: string) => boolean {
  return (name) => {
    const p = snapshot.pod(namespace, name);
    return !!p && holdsSeat(p);
  };
}

/** The instance IDs of a workload's live pods; `except`: a pod to leave out (the one being placed). */
export function instanceSeats(model: WorkloadModel, snapshot: Snapshot, except?: string): InstanceSeats {
  const replicas = Math.max(0, model.workload?.replicas ?? 0);
  const list = model.zones();
  const zoneOfId = (id: number) => seatZone(list.zones, id, model.preferences.sequence).zone;
  const held = new Map<number, string>();
  const waiting: (WaitingPod & { createdAt: number })[] = [];
  for (const p of model.pods()) {
    if (p.name === except) continue;
    if (p.instanceId >= 0) {
      if (p.instanceId < replicas && !held.has(p.instanceId)) held.set(p.instanceId, p.name);
    } else if (p.nodeName) {
      const node = snapshot.node(p.nodeName);
      waiting.push({ name: p.name, zone: node ? zoneOf(node, list.topologyKey) : undefined, createdAt: p.createdAt });
    }
  }
  waiting.sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
  // Enough free IDs for every waiting pod to find one in its zone, and one more: bounded by the
  // pods and zones, not by spec.replicas.
  const enough = (waiting.length + 1) * Math.max(1, list.zones.length);
  const free: number[] = [];
  for (let id = 0; id < replicas && free.length < enough; id++) if (!held.has(id)) free.push(id);
  return { replicas, held, free, waiting, due: idsForWaitingPods(free, waiting, zoneOfId), zoneOfId };
}

/**
 * The ID a pod created while every ID is held (a rollout's surge pod) is placed for: that of
 * the pod the old ReplicaSet removes next, in the workload's removal order (the deletion
 * costs), passing over those placed pods without an ID already wait for. It is placed in that
 * ID's zone and receives the ID when that pod goes. Undefined when no pod of another
 * ReplicaSet holds an ID: the pod waits for a free one.
 */
export function rolloutSeat(
  model: WorkloadModel, pod: Pick<SlimPod, 'name' | 'owner'>, seats: InstanceSeats, snapshot: Snapshot,
): number | undefined {
  const byName = new Map([...model.pods()].map((p) => [p.name, p]));
  const old = [...seats.held].filter(([, name]) => byName.get(name)?.owner?.name !== pod.owner?.name);
  if (old.length === 0) return undefined;
  const costs = deletionCosts(model, snapshot);
  const rank = (name: string) => costs.get(name) ?? Number.MAX_SAFE_INTEGER;
  old.sort((a, b) => rank(a[1]) - rank(b[1]) || b[0] - a[0]);
  const succeeded = Math.max(0, seats.waiting.length - seats.free.length);
  return old[Math.min(succeeded, old.length - 1)]![0];
}

/** The model of `w` if its pods are pinned by instance ID (a Deployment, not its ReplicaSets). */
export function instanceIdModel(
  w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {},
): (WorkloadModel & { workload: SlimWorkload }) | undefined {
  if (ownedThrough(w) || w.annotations[ANNOTATION.instanceIds] !== 'true') return undefined;
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings, lists);
  return model.seats === 'instance-id' && policyOf(model)?.pinsSeats && model.workload ? model as WorkloadModel & { workload: SlimWorkload } : undefined;
}
