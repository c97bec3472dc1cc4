import { workloadKindSpec, type WorkloadKind } from '../../../cluster/kinds.js';
import type { SlimWorkloadSpread, WorkloadSpreadSubsetStatus } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { workloadModel, type ZoneListDeps } from '../../model.js';
import { unboundReservations } from '../../occupancy.js';
import type { ReservationView } from '../../reservations.js';
import type { PlacementSettings } from '../../settings.js';
import { subsetQuotas, type SpreadModel } from './subsets.js';

export interface WorkloadSpreadStatus {
  observedGeneration: number;
  subsetStatuses: WorkloadSpreadSubsetStatus[];
}

/**
 * The status OpenKruise's controller would write for a WorkloadSpread (docs/design.md#workloadspread):
 * per subset the pods in it, how many it still misses (−1: unlimited) and the pods given a
 * seat there that are not bound yet. Undefined while the target is not cached.
 */
export function workloadSpreadStatus(
  ws: SlimWorkloadSpread, snapshot: Snapshot, settings: PlacementSettings, reservations: ReservationView, lists: ZoneListDeps = {},
): WorkloadSpreadStatus | undefined {
  const kind = workloadKindSpec(ws.targetRef.kind)?.kind as WorkloadKind | undefined;
  const target = kind && snapshot.workload(kind, ws.namespace, ws.targetRef.name);
  if (!kind || !target) return undefined;
  const model = workloadModel({ kind, namespace: ws.namespace, name: target.name }, target, snapshot, settings, lists);
  if (model.policy !== 'workloadspread' || (model as SpreadModel).ws.name !== ws.name) return undefined;
  const spread = model as SpreadModel;
  const creating = new Map<string, Record<string, string>>();
  for (const r of unboundReservations(spread, reservations, snapshot)) {
    if (r.subset === undefined) continue;
    const pods = creating.get(r.subset) ?? creating.set(r.subset, {}).get(r.subset)!;
    pods[r.pod] = new Date(r.at).toISOString();
  }
  const subsetStatuses = subsetQuotas(spread, target.replicas, snapshot, reservations, '', () => undefined).map((q) => ({
    name: q.name,
    replicas: q.bound,
    missingReplicas: q.max === Infinity ? -1 : Math.max(0, q.max - q.bound - q.reserved),
    creatingPods: creating.get(q.name) ?? {},
  }));
  return { observedGeneration: ws.generation, subsetStatuses };
}
