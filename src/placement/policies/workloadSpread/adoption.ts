import { holdsSeat, type SlimPod, type SlimWorkloadSpread } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { nodeSubset, resolveMax, type SpreadModel } from './subsets.js';
import { podVersion } from './versions.js';

// Pods a WorkloadSpread did not place (created before it, or marked for another one) are filed
// under a subset by their node and marked with it, as OpenKruise's controller does
// (docs/design.md#workloadspread). Pure: the model in, the marks to write out.

/** One pod to mark: the subset it is filed under, and the value of apps.kruise.io/matched-workloadspread. */
export interface Adoption { pod: SlimPod; subset: string; value: string }

/** The annotation's value, as Kruise's webhook and controller write it. */
export const matchedValue = (workloadSpread: string, subset: string) => JSON.stringify({ name: workloadSpread, subset });

/**
 * The running pods of the workload without this WorkloadSpread's mark, each with the subset Kruise
 * files it under: the subset whose required term and tolerations take its node and whose preferred
 * terms weigh most there, then one with room left in the pod's revision (counting the pods marked
 * already, then those adopted before it, oldest first). A pod no subset takes stays unmarked.
 */
export function adoptions(model: SpreadModel, snapshot: Snapshot): Adoption[] {
  const { ws } = model;
  const replicas = model.workload?.replicas ?? 0;
  const active = [...model.pods()].filter(holdsSeat);
  const missing = new Map<string, number>();
  const key = (version: string, subset: string) => `${version}\n${subset}`;
  const left = (version: string, subset: string) => {
    const k = key(version, subset);
    if (!missing.has(k)) missing.set(k, resolveMax(ws.subsets.find((s) => s.name === subset)?.maxReplicas ?? null, replicas));
    return missing.get(k)!;
  };
  for (const p of active) {
    if (p.kruiseMatch?.workloadSpread !== ws.name) continue;
    const version = podVersion(p);
    missing.set(key(version, p.kruiseMatch.subset), left(version, p.kruiseMatch.subset) - 1);
  }
  const out: Adoption[] = [];
  const unmarked = active.filter((p) => p.nodeName && p.kruiseMatch?.workloadSpread !== ws.name)
    .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
  for (const pod of unmarked) {
    const node = snapshot.node(pod.nodeName);
    if (!node) continue;
    const version = podVersion(pod);
    const subset = nodeSubset(pod, node, ws, (s) => left(version, s) > 0);
    if (!subset) continue;
    missing.set(key(version, subset.name), left(version, subset.name) - 1);
    out.push({ pod, subset: subset.name, value: matchedValue(ws.name, subset.name) });
  }
  return out;
}

/** The labels and annotations of a subset's patch, which Kruise also writes on a pod it adopts (unless the WorkloadSpread opts out). */
export function adoptedMetadata(ws: SlimWorkloadSpread, subset: string): { labels?: Record<string, unknown>; annotations?: Record<string, unknown> } {
  if (!ws.patchAdoptedPods) return {};
  const metadata = ws.patches.get(subset)?.metadata;
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) return {};
  const { labels, annotations } = metadata as Record<string, unknown>;
  const map = (x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? x as Record<string, unknown> : undefined);
  return { labels: map(labels), annotations: map(annotations) };
}
