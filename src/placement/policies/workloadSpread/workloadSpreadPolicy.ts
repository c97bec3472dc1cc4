import type { SlimWorkloadSpread } from '../../../cluster/objects.js';
import type { PlacementPolicy } from '../../policy.js';
import { spreadShrinking, workloadSpreadCosts } from './costs.js';
import { subsetPolicy } from './filter.js';
import { workloadSpreadHealth } from './subsetHealth.js';
import { findWorkloadSpread, pendingSubsets, subsetOfPod, subsetQuotas, subsetZones } from './subsets.js';

/** A WorkloadSpread targets the workload (or the pod's ReplicaSet): its subsets decide. */
export const workloadSpreadPolicy: PlacementPolicy<'workloadspread', { ws: SlimWorkloadSpread }> = {
  name: 'workloadspread',
  pinsSeats: false,
  freezesZoneList: false,
  covers: (f) => findWorkloadSpread(f.snapshot, f.ref, f.replicaSet) !== undefined,
  own: (f) => {
    const ws = findWorkloadSpread(f.snapshot, f.ref, f.replicaSet);
    return ws && { ws };
  },
  filter: subsetPolicy,
  shrinking: spreadShrinking,
  deletionCosts: (model, pods, snapshot) => workloadSpreadCosts(model, pods, model.workload?.replicas ?? pods.length, snapshot),
  // A WorkloadSpread over a StatefulSet still numbers its pods: their ordinal ranges are the subsets.
  decidedBy: (model) => (model.seats !== 'none' ? 'pin' : 'subset'),
  health: workloadSpreadHealth,
  podLayout: (model, pod, snapshot) => ({ subset: subsetOfPod(pod, model.ws, snapshot) }),
  layout: (model, snapshot, state) => {
    const subsets = subsetQuotas(model, model.workload?.replicas ?? 0, snapshot, state.reservations, '', (key) => state.unschedulableSubsets.get(key));
    return {
      workloadSpread: {
        name: model.ws.name, strategy: model.ws.strategy, subsets,
        pending: pendingSubsets(model, subsets, snapshot, state.reservations.forWorkload(model.key).map((r) => r.uid)),
        subsetZones: subsetZones(model.ws, model.zones().topologyKey),
      },
    };
  },
};
