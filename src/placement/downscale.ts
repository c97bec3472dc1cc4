import { ownedThrough, workloadKindSpec } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { policyOf, workloadModel, type WorkloadModel, type ZoneListDeps } from './model.js';
import type { PlacementSettings } from './settings.js';
import { better, compare, zoneShrinking, type Key, type Shrinking } from './shrinking.js';
import { resolveWorkload, workloadKey } from './workload.js';

// The KEP-3189 pod picker and the deletion costs (docs/design.md#scale-down): which pods to
// remove so that what remains is still a good layout, in the order of each workload's policy.

function shrinking(model: WorkloadModel, snapshot: Snapshot): Shrinking {
  const remaining = new Map<string, SlimPod>();
  for (const p of model.pods()) if (p.nodeName) remaining.set(p.name, p);
  const own = policyOf(model)?.shrinking;
  return own ? own(model, snapshot, remaining) : zoneShrinking(model, snapshot, remaining);
}

/** Which candidates to remove (the picker's answer, before the wire names it). */
export interface PodPick {
  chosen: string[];
  /** Equally good for the last places. */
  tied: string[];
  warnings: string[];
}

/**
 * The downscale pod picker (KEP-3189 contract): at least `n` of the candidates, or all of
 * them when there are fewer; `tied` are equally good for the last places. The same
 * cluster state always gives the same answer.
 */
export function pickPodsToRemove(
  namespace: string, n: number, candidates: readonly string[], snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {},
): PodPick {
  const unique = [...new Set(candidates)];
  const unknown: string[] = [];
  const warnings: string[] = [];
  const groups = new Map<string, Shrinking>();
  let known = 0;
  for (const name of unique) {
    const pod = snapshot.pod(namespace, name);
    if (!pod || !pod.nodeName) {
      unknown.push(name);
      warnings.push(`${namespace}/${name} ${pod ? 'is not bound' : 'is not in the cache'}: chosen first`);
      continue;
    }
    const resolved = resolveWorkload(pod, snapshot);
    const ref = resolved?.ref ?? { kind: 'Pod', namespace, name };
    let group = groups.get(workloadKey(ref));
    if (!group) groups.set(workloadKey(ref), (group = shrinking(workloadModel(ref, resolved?.object, snapshot, settings, lists), snapshot)));
    if (!group.remaining.has(pod.name)) group.remaining.set(pod.name, pod);
    group.addCandidate(pod);
    known++;
  }
  unknown.sort();
  if (unknown.length >= n) {
    return { chosen: unknown.slice(0, n), tied: unknown.length > n ? unknown.slice(n) : [], warnings };
  }

  // Remove one pod at a time until n are gone; remember each removal's key.
  const wanted = Math.min(n - unknown.length, known);
  for (const g of groups.values()) g.start();
  const picks: { name: string; key: Key }[] = [];
  let lastTies: string[] = [];
  for (let step = 0; step < wanted; step++) {
    let best: { pod: SlimPod; key: Key; group: Shrinking } | undefined;
    for (const group of groups.values()) {
      const b = group.best();
      if (b && better(b, best)) best = { ...b, group };
    }
    if (!best) break;
    // The candidates as good as the last pick, before it is taken: the tie for the last place.
    if (step === wanted - 1) lastTies = [...groups.values()].flatMap((g) => g.tiedWith(best.key)).map((p) => p.name);
    best.group.remove(best.pod);
    picks.push({ name: best.pod.name, key: best.key });
  }
  const last = picks[picks.length - 1];
  if (!last) return { chosen: unknown, tied: [], warnings };
  // Picks as good as the last one, and the candidates still tied with it, are the tie.
  const tiedPicks = picks.filter((p) => compare(p.key, last.key) === 0).map((p) => p.name);
  const tied = [...new Set([...tiedPicks, ...lastTies])];
  let chosen = [...unknown, ...picks.filter((p) => compare(p.key, last.key) !== 0).map((p) => p.name)];
  let tiedOut = tied;
  if (chosen.length + tied.length === n || tied.length === tiedPicks.length) {
    chosen = [...chosen, ...tiedPicks];
    tiedOut = [];
  }
  return { chosen, tied: tiedOut.sort(), warnings };
}

/**
 * Deletion costs that make the native controller remove the workload's pods in the order
 * the picker would: WorkloadSpread workloads get Kruise's values (for every active pod, as
 * Kruise's controller gives them), others their rank in the full removal order (0 = removed first).
 */
export function deletionCosts(model: WorkloadModel, snapshot: Snapshot): Map<string, number> {
  const own = policyOf(model)?.deletionCosts;
  // Every active pod, Pending ones too: Kruise gives a pod matched to a subset its subset's cost before it binds.
  if (own) return own(model, model.pods(), snapshot);
  return new Map(removalOrder(model, snapshot).map((pod, i) => [pod.name, i]));
}

/**
 * The workload's bound pods in the order the picker removes them when it shrinks to nothing
 * (what `pickPodsToRemove` gives for all of them, without resolving each pod again): first first.
 */
export function removalOrder(model: WorkloadModel, snapshot: Snapshot): SlimPod[] {
  const group = shrinking(model, snapshot);
  for (const pod of group.remaining.values()) group.addCandidate(pod);
  group.start();
  const order: SlimPod[] = [];
  for (let b = group.best(); b; b = group.best()) {
    group.remove(b.pod);
    order.push(b.pod);
  }
  return order;
}

/**
 * The model of `w` if its ReplicaSet pods get deletion costs: Deployments and standalone
 * ReplicaSets with instance IDs, zone preferences, or a WorkloadSpread. Nothing else is touched.
 */
export function costManagedModel(w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}): WorkloadModel | undefined {
  // A Deployment's ReplicaSets are covered by the Deployment.
  if (!workloadKindSpec(w.kind)?.deletionCost || ownedThrough(w)) return undefined;
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings, lists);
  return model.policy !== 'none' ? model : undefined;
}
