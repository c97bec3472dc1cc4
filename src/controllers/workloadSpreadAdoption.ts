import type { Logger } from 'pino';
import type { ApiClient } from '../cluster/apiClient.js';
import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Timers } from '../common/clock.js';
import type { Metrics } from '../metrics/metrics.js';
import { workloadModel, type ZoneListDeps } from '../placement/model.js';
import { adoptions, matchedValue } from '../placement/policies/workloadSpread/adoption.js';
import type { SpreadModel } from '../placement/policies/workloadSpread/subsets.js';
import type { PlacementSettings } from '../placement/settings.js';
import { podAnnotationController, type PacingOptions, type PodAnnotator, type StoredPod } from './podAnnotations.js';

/** The mark as the cache shows it, written the way adoption writes it. */
const markOf = (pod: SlimPod) => (pod.kruiseMatch ? matchedValue(pod.kruiseMatch.workloadSpread, pod.kruiseMatch.subset) : undefined);

function storedMark(stored: StoredPod): string | undefined {
  const raw = stored.metadata?.annotations?.[ANNOTATION.kruiseMatched];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as { name?: unknown; subset?: unknown };
    return typeof v.name === 'string' && v.name && typeof v.subset === 'string' && v.subset ? matchedValue(v.name, v.subset) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * apps.kruise.io/matched-workloadspread on the running pods of a standalone WorkloadSpread's
 * workload that lack it or name another WorkloadSpread (docs/design.md#workloadspread): their
 * subset by their node, as OpenKruise's controller marks them (but not with the subset's patch
 * metadata, as Kruise would: docs/security.md#workloadspread-editors). Each write is conditional on the pod as read.
 */
function workloadSpreadAdoptionAnnotator(source: SnapshotSource, settings: PlacementSettings, lists: ZoneListDeps): PodAnnotator {
  return {
    action: 'workloadspread-adopt',
    annotation: ANNOTATION.kruiseMatched,
    current: markOf,
    *desired(snapshot, w) {
      const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings, lists);
      if (model.policy !== 'workloadspread') return;
      for (const a of adoptions(model as SpreadModel, snapshot)) yield { pod: a.pod, value: a.value };
    },
    conditional(pod, value, stored) {
      if (storedMark(stored) !== markOf(pod) || (stored.spec?.nodeName ?? '') !== pod.nodeName) return undefined;
      // Only the mark: the subset's patch metadata would be the WorkloadSpread editor's words written with zonekeeper's
      // rights (docs/security.md#workloadspread-editors); the write-scope policy refuses labels.
      const { name } = JSON.parse(value) as { name: string };
      return [...source.snapshot.workloadSpreads(pod.namespace)].some((x) => x.name === name) ? {} : undefined;
    },
  };
}

/** Marks the pods a standalone WorkloadSpread adopts; runs in the Lease's holder. */
export function workloadSpreadAdoptionController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, opts: PacingOptions, log: Logger, metrics: Metrics,
  lists: ZoneListDeps = {}, clock?: Timers,
) {
  return podAnnotationController(api, source, workloadSpreadAdoptionAnnotator(source, settings, lists), opts, log, metrics, clock);
}
