import { ANNOTATION } from '../cluster/annotations.js';
import { holdsSeat, MAX_INDEX, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import { ownedThrough, workloadKindNamed, workloadKindSpec } from '../cluster/kinds.js';
import type { Snapshot } from '../cluster/store.js';

/** The workload a pod belongs to: a Deployment through its ReplicaSet, or the owner itself. */
export interface WorkloadRef {
  kind: string;
  namespace: string;
  name: string;
}

export interface ResolvedWorkload {
  ref: WorkloadRef;
  /** Undefined for kinds zonekeeper does not cache (a Job, a DaemonSet) or not cached yet. */
  object: SlimWorkload | undefined;
  /** Why the owner chain could not be followed, when it could not. */
  missing: string | undefined;
}

export const workloadKey = (r: WorkloadRef) => `${r.namespace}/${r.kind}/${r.name}`;

/** The cached workload a `workloadKey` names, or undefined (gone, or a kind zonekeeper does not cache). */
export function workloadByKey(snapshot: Snapshot, key: string): SlimWorkload | undefined {
  const [namespace, kindText, name] = key.split('/');
  const kind = workloadKindNamed(kindText ?? '');
  return kind && snapshot.workload(kind, namespace!, name!);
}

/** The workload a cached workload's change belongs to: a Deployment's ReplicaSet (a rollout) is its Deployment's. */
export const changedWorkloadKey = (w: WorkloadRef & { owner?: { kind: string; name: string } | undefined }) =>
  (w.owner?.kind === 'Deployment' ? `${w.namespace}/Deployment/${w.owner.name}` : workloadKey(w));

export function resolveWorkload(pod: SlimPod, snapshot: Snapshot): ResolvedWorkload | undefined {
  const owner = pod.owner;
  if (!owner) return undefined;
  const ns = pod.namespace;
  const spec = workloadKindSpec(owner.kind);
  if (!spec) return { ref: { kind: owner.kind, namespace: ns, name: owner.name }, object: undefined, missing: undefined };
  const notCached = (kind: string, name: string) => `${kind} ${ns}/${name} is not in the cache yet`;
  const object = snapshot.workload(spec.kind, ns, owner.name);
  if (!object) return { ref: { kind: spec.kind, namespace: ns, name: owner.name }, object: undefined, missing: notCached(spec.kind, owner.name) };
  // A Deployment's ReplicaSet: the Deployment is the workload.
  if (!ownedThrough(object)) return { ref: { kind: spec.kind, namespace: ns, name: owner.name }, object, missing: undefined };
  const parentKind = workloadKindSpec(object.owner!.kind)!.kind;
  const parent = snapshot.workload(parentKind, ns, object.owner!.name);
  return {
    ref: { kind: parentKind, namespace: ns, name: object.owner!.name }, object: parent,
    missing: parent ? undefined : notCached(parentKind, object.owner!.name),
  };
}

export function optedOut(pod: SlimPod, workload: SlimWorkload | undefined): boolean {
  return pod.ignore || workload?.annotations[ANNOTATION.ignore] === 'true';
}

/** The controller owners of the workload's pods: itself, or a Deployment's ReplicaSets. */
function podOwners(ref: WorkloadRef, snapshot: Snapshot): { kind: string; names: string[] } {
  const via = workloadKindSpec(ref.kind)?.podsOwnedVia;
  if (!via) return { kind: ref.kind, names: [ref.name] };
  return { kind: via, names: [...snapshot.ownedWorkloads(ref.kind, ref.namespace, ref.name)].map((rs) => rs.name) };
}

/** Pods that hold a seat of the workload: not terminating, not finished. */
export function workloadPods(ref: WorkloadRef, snapshot: Snapshot): SlimPod[] {
  return ownedPods(ref, snapshot, holdsSeat);
}

/** Pods of the workload not finished, terminating ones too: a pod on its way out is a seat going empty. */
export function workloadLivePods(ref: WorkloadRef, snapshot: Snapshot): SlimPod[] {
  return ownedPods(ref, snapshot, (p) => !p.finished);
}

function ownedPods(ref: WorkloadRef, snapshot: Snapshot, keep: (pod: SlimPod) => boolean): SlimPod[] {
  const { kind, names } = podOwners(ref, snapshot);
  const out: SlimPod[] = [];
  for (const owner of names) {
    for (const pod of snapshot.podsOwnedBy(kind, ref.namespace, owner)) {
      if (keep(pod)) out.push(pod);
    }
  }
  return out;
}

/**
 * Per node, the workload's bound pods holding a seat, less the pod `exclude` (by UID) were it
 * one: `workloadPods` counted by node, from the store's counts instead of a walk of them all.
 */
export function workloadPodsPerNode(ref: WorkloadRef, snapshot: Snapshot, exclude: string): ReadonlyMap<string, number> {
  const { kind, names } = podOwners(ref, snapshot);
  const per = names.map((owner) => snapshot.seatedPodsPerNode(kind, ref.namespace, owner)).filter((m) => m.size > 0);
  const self = snapshot.podByUid(exclude);
  // As the store counts: bound ('' is not), holding a seat, owned by one of the owners.
  const counted = !!self?.nodeName && holdsSeat(self) && self.owner?.kind === kind
    && self.namespace === ref.namespace && names.includes(self.owner.name);
  if (per.length === 1 && !counted) return per[0]!;
  const out = new Map<string, number>();
  for (const m of per) for (const [node, n] of m) out.set(node, (out.get(node) ?? 0) + n);
  if (counted) {
    const n = out.get(self.nodeName!)! - 1;
    if (n > 0) out.set(self.nodeName!, n);
    else out.delete(self.nodeName!);
  }
  return out;
}

/**
 * The ordinals a StatefulSet's controller keeps: the first `replicas` from ordinals.start,
 * skipping reserved ones (an Advanced StatefulSet's reserveOrdinals), at most `limit`.
 * Reserved ranges are jumped over, so the work is bounded by `limit` and the list's length.
 */
export function expectedOrdinals(w: SlimWorkload, limit: number): number[] {
  const out: number[] = [];
  const { singles } = w.reservedOrdinals;
  const ranges = [...w.reservedOrdinals.ranges].sort((a, b) => a[0] - b[0]);
  const want = Math.min(w.replicas, limit);
  let o = w.ordinalsStart, r = 0;
  while (out.length < want && o <= MAX_INDEX) {
    while (r < ranges.length && ranges[r]![1] < o) r++;
    if (r < ranges.length && ranges[r]![0] <= o) o = ranges[r]![1] + 1;
    else if (singles.has(o)) o++;
    else out.push(o++);
  }
  return out;
}
