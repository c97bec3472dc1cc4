import { ANNOTATION, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';

/** The workload a pod belongs to: a Deployment through its ReplicaSet, or the owner itself. */
export interface WorkloadRef {
  kind: string;
  namespace: string;
  name: string;
}

export interface ResolvedWorkload {
  ref: WorkloadRef;
  /** Undefined for kinds zonekeeper does not cache (CloneSet, Job) or not cached yet. */
  object: SlimWorkload | undefined;
  /** Why the owner chain could not be followed, when it could not. */
  missing: string | undefined;
}

export const workloadKey = (r: WorkloadRef) => `${r.namespace}/${r.kind}/${r.name}`;

export function resolveWorkload(pod: SlimPod, snapshot: Snapshot): ResolvedWorkload | undefined {
  const owner = pod.owner;
  if (!owner) return undefined;
  const ns = pod.namespace;
  if (owner.kind === 'StatefulSet') {
    const sts = snapshot.workload('StatefulSet', ns, owner.name);
    return { ref: { kind: 'StatefulSet', namespace: ns, name: owner.name }, object: sts, missing: sts ? undefined : `StatefulSet ${ns}/${owner.name} is not in the cache yet` };
  }
  if (owner.kind === 'ReplicaSet') {
    const rs = snapshot.workload('ReplicaSet', ns, owner.name);
    if (!rs) return { ref: { kind: 'ReplicaSet', namespace: ns, name: owner.name }, object: undefined, missing: `ReplicaSet ${ns}/${owner.name} is not in the cache yet` };
    if (rs.owner?.kind !== 'Deployment') return { ref: { kind: 'ReplicaSet', namespace: ns, name: rs.name }, object: rs, missing: undefined };
    const deploy = snapshot.workload('Deployment', ns, rs.owner.name);
    return {
      ref: { kind: 'Deployment', namespace: ns, name: rs.owner.name }, object: deploy,
      missing: deploy ? undefined : `Deployment ${ns}/${rs.owner.name} is not in the cache yet`,
    };
  }
  return { ref: { kind: owner.kind, namespace: ns, name: owner.name }, object: undefined, missing: undefined };
}

export function optedOut(pod: SlimPod, workload: SlimWorkload | undefined): boolean {
  return pod.ignore || workload?.annotations[ANNOTATION.ignore] === 'true';
}

/** Pods that hold a seat of the workload: not terminating, not finished. */
export function* workloadPods(ref: WorkloadRef, snapshot: Snapshot): Iterable<SlimPod> {
  const owners = ref.kind === 'Deployment'
    ? [...snapshot.ownedWorkloads('Deployment', ref.namespace, ref.name)].map((rs) => rs.name)
    : [ref.name];
  const kind = ref.kind === 'Deployment' ? 'ReplicaSet' : ref.kind;
  for (const owner of owners) {
    for (const pod of snapshot.podsOwnedBy(kind, ref.namespace, owner)) {
      if (!pod.terminating && !pod.finished) yield pod;
    }
  }
}
