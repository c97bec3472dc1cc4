import { ANNOTATION } from './cluster/annotations.js';
import type { Snapshot } from './cluster/store.js';
import { ADMISSION_CALLER_SETTINGS } from './decision/gatedSubsetPatch.js';
import { targetPods } from './placement/policies/workloadSpread/status.js';
import type { PlacementSettings } from './placement/settings.js';

// What `zonekeeper audit` says of WorkloadSpread subset patches the zone gate could not write in
// full (docs/design.md#the-zone-gate): the pods it decided after their creation, which carry
// zonekeeper.io/subset-patch-not-applied, by WorkloadSpread, subset and fields left out.

/** One subset's pods that lack the same part of its patch. */
export interface SubsetPatchShortfall {
  namespace: string;
  workloadSpread: string;
  subset: string;
  /** The fields not applied, as the annotation names them. */
  notApplied: string;
  pods: number;
  /** The first of them, by name. */
  example: string;
  /** What lets admission apply the patch whole at creation (docs/security.md#who-may-call-the-webhooks). */
  appliedWholeWith: string;
}

export function subsetPatchShortfalls(snapshot: Snapshot, settings: PlacementSettings, namespace?: string): SubsetPatchShortfall[] {
  const out = new Map<string, SubsetPatchShortfall>();
  for (const ws of snapshot.allWorkloadSpreads()) {
    if (namespace !== undefined && ws.namespace !== namespace) continue;
    for (const pod of targetPods(ws, snapshot, settings, {}).pods) {
      if (pod.subsetPatchNotApplied === undefined || pod.kruiseMatch?.workloadSpread !== ws.name) continue;
      const key = `${ws.namespace}/${ws.name}/${pod.kruiseMatch.subset}/${pod.subsetPatchNotApplied}`;
      const seen = out.get(key);
      if (seen) {
        seen.pods++;
        if (pod.name < seen.example) seen.example = pod.name;
      } else {
        const { subset } = pod.kruiseMatch;
        out.set(key, {
          namespace: ws.namespace, workloadSpread: ws.name, subset, notApplied: pod.subsetPatchNotApplied, pods: 1, example: pod.name,
          appliedWholeWith: ADMISSION_CALLER_SETTINGS,
        });
      }
    }
  }
  return [...out.values()].sort((a, b) => `${a.namespace}/${a.workloadSpread}/${a.subset}`.localeCompare(`${b.namespace}/${b.workloadSpread}/${b.subset}`));
}

/** The audit's lines about them, under its table. */
export function subsetPatchShortfallText(rows: readonly SubsetPatchShortfall[]): string {
  const lines = rows.map((r) => `  ${r.namespace}/${r.workloadSpread} subset ${r.subset}: ${r.pods} pod${r.pods === 1 ? '' : 's'} (${r.example}${r.pods > 1 ? ', …' : ''}) without ${r.notApplied}`);
  return [`Subset patches not applied in full (pods the zone gate decided after their creation; annotation ${ANNOTATION.subsetPatchNotApplied}; `
    + `admission applies a patch whole only where it knows its caller is kube-apiserver, under the default nowhere: set ${ADMISSION_CALLER_SETTINGS}):`, ...lines].join('\n');
}
