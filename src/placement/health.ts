import { ANNOTATION } from '../cluster/annotations.js';
import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { adoptedList, placedSeats } from './zoneListAdoption.js';
import { removalOrder } from './downscale.js';
import { managedModels, policyOf, type CachedModel, type WorkloadModel } from './model.js';
import { disruptionLine, disruptionState } from './zoneDisruption.js';
import { rolloutLine, rolloutView, type RolloutDefaults } from './rolloutPlan.js';
import type { DecisionState } from './policy.js';
import { podVolumes, volumeZones } from './volumes.js';
import { judged, type HealthBase, type OffPinCause, type OffPinPod, type WorkloadHealth } from './healthRecord.js';
import { workloadKey } from './workload.js';
import { seatZones, SEQUENCE_WORK_LIMIT, sequenceCounts, zoneSequence } from './zoneSequence.js';
import { leftOutZones, unusableZones, type ZoneList } from './zones.js';
import { CANNOT_GROW_LISTED, type CannotGrow } from './healthRecord.js';

// A managed workload's layout judged against where its seats should be (docs/design.md#health):
// one computation behind the metrics, the Events, the layout page, `zonekeeper audit` and repair.

export type { WorkloadHealth } from './healthRecord.js';

export interface HealthOptions {
  now: number;
  /** Unbound pods younger than this may still fill a zone: no risk is called for them yet. */
  settleSeconds: number;
  /** Zone-by-zone rollouts' defaults (config zoneRollout); undefined: rollouts are off, none is shown. */
  rollout?: RolloutDefaults;
}

/** The list to judge a pinned workload by: frozen, else the one adoption would freeze. */
function judgedList(model: WorkloadModel, pods: readonly SlimPod[], snapshot: Snapshot, settings: DecisionState['settings']): ZoneList {
  const l = model.zones();
  if (l.source !== 'nodes' || model.seats === 'none' || !settings.adoptExisting || model.preferences.parsed !== undefined) return l;
  const placed = placedSeats(model.seats === 'ordinal' ? model.workload : undefined, pods, (p) => model.seat(p).index, snapshot, l.topologyKey);
  return placed.length === 0 ? l : { ...l, zones: adoptedList(l.zones, placed).zones };
}

/** Per pod: the zones its bound volumes allow (undefined: no bound volume). */
function boundVolumeZones(pod: SlimPod, snapshot: Snapshot, topologyKey: string): Set<string> | undefined {
  if (pod.claims.length === 0) return undefined;
  const bound = podVolumes(pod, snapshot).constraints.filter((c) => c.bound);
  return bound.length > 0 ? volumeZones(bound, snapshot, topologyKey) : undefined;
}

/** Why a bound pod sits outside its seat's zone. */
function causeOf(pod: SlimPod, pinned: string | undefined, volumes: Set<string> | undefined, frozenAt: number, list: ZoneList, settings: DecisionState['settings']): OffPinCause {
  if (volumes && (pinned === undefined || !volumes.has(pinned))) return 'volume';
  if (list.source === 'nodes') return 'placed-before';
  if (Number.isFinite(frozenAt) && pod.createdAt < frozenAt) return 'placed-before';
  return settings.zoneFallback === 'adaptive' && Number.isFinite(frozenAt) ? 'fallback' : 'unknown';
}

/** Why a bound pod sits outside `pinned`, its seat's zone, read as health reads it: the layout page and /debug/explain ask per pod. */
export function podOffPinCause(pod: SlimPod, pinned: string | undefined, w: SlimWorkload, snapshot: Snapshot, list: ZoneList,
  settings: DecisionState['settings']): OffPinCause {
  const frozenAt = Date.parse(w.annotations[ANNOTATION.zonesFrozenAt] ?? '');
  return causeOf(pod, pinned, boundVolumeZones(pod, snapshot, list.topologyKey), frozenAt, list, settings);
}

/**
 * Scale-down risk: keeping the bound pods in the reverse of the removal order, the largest
 * size m below the current one whose kept pods cover fewer wanted zones than the first m
 * seats of the sequence do (`wantedAt(m)`).
 */
function scaleDownRisk(kept: readonly (string | undefined)[], wantedAt: (m: number) => number): WorkloadHealth['scaleDown'] {
  const seen = new Set<string>();
  let worst: WorkloadHealth['scaleDown'];
  for (let m = 1; m < kept.length; m++) {
    const z = kept[m - 1];
    if (z !== undefined) seen.add(z);
    const wanted = wantedAt(m);
    if (seen.size < wanted) worst = { replicas: m, zones: seen.size, wanted };
  }
  return worst;
}

/** Zones usable or growable among the sequence's first m seats, for m up to `length`: min(m, |L|) for equal weights, every zone usable. */
function prefixZones(model: WorkloadModel, list: ZoneList, length: number): (m: number) => number {
  const { zones, reach } = list;
  const usable = (z: string) => reach.of(z) !== 'never';
  if (model.preferences.parsed === undefined && zones.every(usable)) return (m) => Math.min(m, zones.length);
  const seen = new Set<string>();
  const out = [0];
  for (const z of zoneSequence(zones, length, model.preferences.sequence)) out.push(usable(z) ? seen.add(z).size : seen.size);
  return (m) => out[Math.min(m, out.length - 1)]!;
}

/** An autoscaler's word older than this no longer counts: it repeats it while it still holds. */
const SCALE_REPORT_FRESH_MS = 15 * 60_000;

/** Pending pods an autoscaler said it will not add a node for, lately: the first few, and how many. */
function cannotGrowOf(pending: readonly SlimPod[], snapshot: Snapshot, topologyKey: string,
  now: number): { cannotGrow: CannotGrow[]; cannotGrowCount: number } {
  const cannotGrow: CannotGrow[] = [];
  let cannotGrowCount = 0;
  for (const p of pending) {
    const report = snapshot.scaleReports(p.uid)[0];
    if (!report || now - report.at > SCALE_REPORT_FRESH_MS) continue;
    cannotGrowCount++;
    if (cannotGrow.length < CANNOT_GROW_LISTED) {
      cannotGrow.push({ pod: p.name, zone: p.selection?.nodeSelector[topologyKey], source: report.source, message: report.message });
    }
  }
  return { cannotGrow, cannotGrowCount };
}

/** The health of a managed workload (a model some policy covers), with its disruptions when it is opted in to the zone disruption budget. */
export function workloadHealth(model: WorkloadModel, w: SlimWorkload, snapshot: Snapshot, state: DecisionState,
  opts: HealthOptions): WorkloadHealth | undefined {
  const h = layoutHealth(model, w, snapshot, state, opts);
  if (!h) return h;
  const disruption = disruptionState(model as CachedModel, w, snapshot);
  const rollout = opts.rollout ? rolloutView(model as CachedModel, w, snapshot, opts.rollout, opts.now) : undefined;
  const lines = [disruptionLine(disruption), rolloutLine(rollout)].filter((l) => l !== undefined);
  if (!disruption && !rollout) return h;
  const reason = lines.length === 0 ? h.reason : [...(h.reason === 'ok' ? [] : [h.reason]), ...lines].join('; ');
  return { ...h, ...(disruption ? { disruption } : {}), ...(rollout ? { rollout } : {}), reason };
}

function layoutHealth(model: WorkloadModel, w: SlimWorkload, snapshot: Snapshot, state: DecisionState,
  opts: HealthOptions): WorkloadHealth | undefined {
  const policy = policyOf(model);
  if (!policy) return undefined;
  const pods = model.pods();
  let pending = 0;
  let young = 0;
  const unbound: SlimPod[] = [];
  for (const p of pods) {
    if (p.nodeName) continue;
    pending++;
    unbound.push(p);
    if (opts.now - p.createdAt < opts.settleSeconds * 1000) young++;
  }
  const missing = Math.max(0, w.replicas - pods.length);
  const base: HealthBase = { key: workloadKey(model.ref), ref: model.ref, policy: policy.name, replicas: w.replicas, pending, missing,
    settling: missing + young };
  if (policy.health) return policy.health(model, pods, snapshot, base, cannotGrowOf(unbound, snapshot, model.zones().topologyKey, opts.now));

  const list = judgedList(model, pods, snapshot, state.settings);
  const { zones, topologyKey } = list;
  const prefs = model.preferences.sequence;
  const inList = new Set(zones);
  // Each bound pod's zone, read once: every step below needs it (parallel arrays: no per-pod objects).
  const bound: SlimPod[] = [];
  const zoneAt: (string | undefined)[] = [];
  const have = new Map<string, number>();
  for (const p of pods) {
    if (!p.nodeName) continue;
    const node = snapshot.node(p.nodeName);
    const z = node && zoneOf(node, topologyKey);
    bound.push(p);
    zoneAt.push(z);
    if (z !== undefined) have.set(z, (have.get(z) ?? 0) + 1);
  }
  const want = sequenceCounts(zones, w.replicas, prefs)
    ?? Object.fromEntries(zones.map((z, i) => [z, i < w.replicas ? 1 : 0]));

  const off: OffPinPod[] = [];
  let frozenAt: number | undefined;
  const offPin = (p: SlimPod, zone: string | undefined, pinnedZone: string | undefined) => {
    frozenAt ??= Date.parse(w.annotations[ANNOTATION.zonesFrozenAt] ?? '');
    const volumes = boundVolumeZones(p, snapshot, topologyKey);
    off.push({
      pod: p.name, zone, pinnedZone, cause: causeOf(p, pinnedZone, volumes, frozenAt, list, state.settings),
      heldByVolume: zone !== undefined && volumes !== undefined && volumes.has(zone),
    });
  };
  // Positions in `bound`, in the order pods are kept as the workload shrinks: lowest seat
  // last removed, else the reverse of the picker's order.
  let kept: number[];
  if (model.seats !== 'none') {
    const seat = new Float64Array(bound.length);
    const pinOf = seatZones(zones, prefs);
    for (let i = 0; i < bound.length; i++) {
      const index = model.seat(bound[i]!).index;
      seat[i] = index;
      const pinned = index >= 0 ? pinOf(index).zone : undefined;
      if (pinned !== undefined && zoneAt[i] !== pinned) offPin(bound[i]!, zoneAt[i], pinned);
    }
    kept = bound.map((_, i) => i);
    // The store holds a StatefulSet's pods in the order they were created: mostly sorted already.
    if (!seat.every((s, i) => i === 0 || seat[i - 1]! < s)) kept.sort((a, b) => seat[a]! - seat[b]! || bound[a]!.name.localeCompare(bound[b]!.name));
  } else {
    const position = new Map(bound.map((p, i) => [p, i]));
    const removal = removalOrder(model, snapshot).map((p) => position.get(p)!);
    // No seats: the pods of a zone over its share, the ones the removal order takes first.
    const over = new Map(zones.map((z) => [z, (have.get(z) ?? 0) - (want[z] ?? 0)]));
    for (const i of removal) {
      const z = zoneAt[i];
      const excess = z === undefined ? 1 : (over.get(z) ?? 1);
      if (excess <= 0) continue;
      if (z !== undefined && over.has(z)) over.set(z, excess - 1);
      offPin(bound[i]!, z, undefined);
    }
    kept = removal.reverse();
  }

  const sizes = Math.min(kept.length, Math.floor(SEQUENCE_WORK_LIMIT / Math.max(1, zones.length)));
  const keptZones = new Array<string | undefined>(sizes);
  for (let k = 0; k < sizes; k++) {
    const z = zoneAt[kept[k]!];
    keptZones[k] = z !== undefined && inList.has(z) ? z : undefined;
  }
  const scaleDown = scaleDownRisk(keptZones, prefixZones(model, list, sizes));
  const growth = { leftOut: leftOutZones(list, ANNOTATION.zonesFrozenAt in w.annotations), ...cannotGrowOf(unbound, snapshot, topologyKey, opts.now) };
  return judged(base, 'zone', scaleDown, want, have, off, unusableZones(list), growth);
}

/** Orders records as every view lists them: at risk first, then by namespace, kind, name. */
export function byRisk(a: WorkloadHealth, b: WorkloadHealth): number {
  return Number(b.atRisk) - Number(a.atRisk) || a.ref.namespace.localeCompare(b.ref.namespace)
    || a.ref.kind.localeCompare(b.ref.kind) || a.ref.name.localeCompare(b.ref.name);
}

/** Every managed workload's health (of one namespace, when given), at risk first. */
export function fleetHealth(snapshot: Snapshot, state: DecisionState, opts: HealthOptions, namespace?: string): WorkloadHealth[] {
  const out: WorkloadHealth[] = [];
  for (const { w, model } of managedModels(snapshot, state, namespace)) {
    const h = workloadHealth(model, w, snapshot, state, opts);
    if (h) out.push(h);
  }
  // managedModels lists by namespace, kind, name already: a stable sort by risk gives byRisk's order.
  return out.sort((a, b) => Number(b.atRisk) - Number(a.atRisk));
}
