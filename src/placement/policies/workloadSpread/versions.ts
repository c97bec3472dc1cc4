import type { SlimPod } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import type { WorkloadRef } from '../../workload.js';

// The revisions of a WorkloadSpread's pods, as OpenKruise counts them (its versioned subset
// statuses): a Deployment's pods by their ReplicaSet, one per pod template; every other pod in
// one version. Subset quotas and deletion costs are kept per version, so a rollout fills each
// subset with new pods while the old ones leave it (docs/design.md#workloadspread).

/** A pod's version: its ReplicaSet's name (it carries the pod-template-hash), '' for pods of other owners. */
export const podVersion = (pod: Pick<SlimPod, 'owner'>): string => (pod.owner?.kind === 'ReplicaSet' ? pod.owner.name : '');

/** The version new pods of a Deployment get: its ReplicaSet of the highest revision. Undefined: one version, or none known. */
export function latestVersion(model: { ref: WorkloadRef }, snapshot: Snapshot): string | undefined {
  const { kind, namespace, name } = model.ref;
  if (kind !== 'Deployment') return undefined;
  let latest: { name: string; revision: number } | undefined;
  for (const rs of snapshot.ownedWorkloads('Deployment', namespace, name)) {
    if (rs.kind === 'ReplicaSet' && (!latest || rs.revision > latest.revision)) latest = rs;
  }
  return latest?.name;
}

/** Subset i's place in the deletion order of its version's pods: from the first for the latest version, from the last for older ones. */
export function subsetRank(i: number, subsets: number, version: string, latest: string | undefined): number {
  return latest === undefined || version === '' || version === latest ? i : subsets - 1 - i;
}
