import type { Logger } from 'pino';
import type { ApiClient } from '../cluster/apiClient.js';
import { ANNOTATION } from '../cluster/annotations.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Timers } from '../common/clock.js';
import type { Metrics } from '../metrics/metrics.js';
import { costManagedModel, deletionCosts } from '../placement/downscale.js';
import type { PlacementSettings } from '../placement/settings.js';
import type { ZoneListDeps } from '../placement/model.js';
import { podAnnotationController, type PacingOptions, type PodAnnotator } from './podAnnotations.js';

export type DeletionCostOptions = PacingOptions;

/** controller.kubernetes.io/pod-deletion-cost on managed ReplicaSet pods, in the picker's order (docs/design.md#scale-down). */
function deletionCostAnnotator(settings: PlacementSettings, lists: ZoneListDeps = {}): PodAnnotator {
  return {
    action: 'deletion-cost',
    annotation: ANNOTATION.deletionCost,
    current: (pod) => pod.deletionCost,
    *desired(snapshot, w) {
      const model = costManagedModel(w, snapshot, settings, lists);
      if (!model) return;
      const costs = deletionCosts(model, snapshot);
      for (const pod of model.pods()) {
        const want = costs.get(pod.name);
        if (want !== undefined) yield { pod, value: String(want) };
      }
    },
  };
}

/** Keeps the deletion costs so the native controller scales down in the picker's order. */
export function deletionCostController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, opts: DeletionCostOptions, log: Logger, metrics: Metrics,
  lists: ZoneListDeps = {}, clock?: Timers,
) {
  return podAnnotationController(api, source, deletionCostAnnotator(settings, lists), opts, log, metrics, clock);
}
