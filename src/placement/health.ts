import { ANNOTATION } from '../cluster/annotations.js';
import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { adoptedList, placedSeats } from './adoption.js';
import { deletionCosts } from './downscale.js';
import { managedModels, policyOf, type WorkloadModel } from './model.js';
import type { DecisionState } from './policy.js';
import { podVolumes, volumeZones } from './volumes.js';
import { judged, type HealthBase, type OffPinCause, type OffPinPod, type WorkloadHealth } from './healthRecord.js';
import { workloadKey } from './workload.js';
import { seatZone, SEQUENCE_WORK_LIMIT, sequenceCounts, zoneSequence } from './zoneSequence.js';
import type { ZoneList } from './zones.js';

// A managed workload's layout judged against where its seats should be (docs/design.md#health):
// one computation behind the metrics, the Events, the layout page, `zonekeeper audit` and repair.

export type { OffPinCause, OffPinPod, WorkloadHealth } from './healthRecord.js';

export interface HealthOptions {
  now: number;
  /** Unbound pods younger than this may still fill a zone: no risk is called for them yet. */
  settleSeconds: number;
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
function causeOf(pod: SlimPod, pinned: string | undefined, volumes: Set<string> | undefined, w: SlimWorkload, list: ZoneList, settings: DecisionState['settings']): OffPinCause {
  if (volumes && (pinned === undefined || !volumes.has(pinned))) return 'volume';
  if (list.source === 'nodes') return 'placed-before';
  const frozenAt = Date.parse(w.annotations[ANNOTATION.zonesFrozenAt] ?? '');
  if (Number.isFinite(frozenAt) && pod.createdAt < frozenAt) return 'placed-before';
  return settings.zoneFallback === 'adaptive' && Number.isFinite(frozenAt) ? 'fallback' : 'unknown';
}

/** Zones each prefix of the sequence covers: wantedAt[m] for the first m seats. */
function coveredByPrefix(zones: readonly string[], length: number, model: WorkloadModel): number[] {
  const seq = zoneSequence(zones, length, model.preferences.sequence);
  const seen = new Set<string>();
  const out = [0];
  for (const z of seq) out.push(seen.add(z).size);
  return out;
}

/**
 * Scale-down risk: keeping the bound pods in the reverse of the removal order, the largest
 * size m below the current one whose kept pods cover fewer wanted zones than the first m
 * seats of the sequence do.
 */
function scaleDownRisk(kept: readonly (string | undefined)[], wantedAt: readonly number[]): WorkloadHealth['scaleDown'] {
  const seen = new Set<string>();
  let worst: WorkloadHealth['scaleDown'];
  for (let m = 1; m < kept.length && m < wantedAt.length; m++) {
    const z = kept[m - 1];
    if (z !== undefined) seen.add(z);
    if (seen.size < wantedAt[m]!) worst = { replicas: m, zones: seen.size, wanted: wantedAt[m]! };
  }
  return worst;
}

/** The order the workload's bound pods are kept in as it shrinks (reverse of the removal order). */
function keepOrder(model: WorkloadModel, bound: readonly SlimPod[], snapshot: Snapshot, state: DecisionState): SlimPod[] {
  if (model.seats !== 'none') return [...bound].sort((a, b) => model.seat(a).index - model.seat(b).index || a.name.localeCompare(b.name));
  const costs = deletionCosts(model, snapshot, state.settings, state);
  return [...bound].sort((a, b) => (costs.get(b.name) ?? 0) - (costs.get(a.name) ?? 0) || a.name.localeCompare(b.name));
}

/** The health of a managed workload (a model some policy covers). */
export function workloadHealth(model: WorkloadModel, w: SlimWorkload, snapshot: Snapshot, state: DecisionState, opts: HealthOptions): WorkloadHealth | undefined {
  const policy = policyOf(model);
  if (!policy) return undefined;
  const pods = [...model.pods()];
  const unbound = pods.filter((p) => !p.nodeName);
  const base = {
    key: workloadKey(model.ref), ref: model.ref, policy: policy.name, replicas: w.replicas,
    pending: unbound.length, missing: Math.max(0, w.replicas - pods.length),
    settling: Math.max(0, w.replicas - pods.length) + unbound.filter((p) => opts.now - p.createdAt < opts.settleSeconds * 1000).length,
  };
  const own: HealthBase = base;
  if (policy.health) return policy.health(model, pods, snapshot, own);

  const list = judgedList(model, pods, snapshot, state.settings);
  const { zones, topologyKey } = list;
  const prefs = model.preferences.sequence;
  const zoneOfPod = (p: SlimPod) => {
    const node = p.nodeName ? snapshot.node(p.nodeName) : undefined;
    return node && zoneOf(node, topologyKey);
  };
  const bound = pods.filter((p) => p.nodeName);
  const have = new Map<string, number>();
  for (const p of bound) {
    const z = zoneOfPod(p);
    if (z !== undefined) have.set(z, (have.get(z) ?? 0) + 1);
  }
  const want = sequenceCounts(zones, w.replicas, prefs)
    ?? Object.fromEntries(zones.map((z, i) => [z, i < w.replicas ? 1 : 0]));

  const kept = keepOrder(model, bound, snapshot, state);
  const off: OffPinPod[] = [];
  const offPin = (p: SlimPod, zone: string | undefined, pinnedZone: string | undefined) => {
    const volumes = boundVolumeZones(p, snapshot, topologyKey);
    off.push({
      pod: p.name, zone, pinnedZone, cause: causeOf(p, pinnedZone, volumes, w, list, state.settings),
      heldByVolume: zone !== undefined && volumes !== undefined && volumes.has(zone),
    });
  };
  if (model.seats !== 'none') {
    for (const p of bound) {
      const index = model.seat(p).index;
      const pinned = index >= 0 ? seatZone(zones, index, prefs).zone : undefined;
      const zone = zoneOfPod(p);
      if (pinned !== undefined && zone !== pinned) offPin(p, zone, pinned);
    }
  } else {
    // No seats: the pods of a zone over its share, the ones its removal order takes first.
    const over = new Map(zones.map((z) => [z, (have.get(z) ?? 0) - (want[z] ?? 0)]));
    for (const p of [...kept].reverse()) {
      const z = zoneOfPod(p);
      const excess = z === undefined ? 1 : (over.get(z) ?? 1);
      if (excess <= 0) continue;
      if (z !== undefined && over.has(z)) over.set(z, excess - 1);
      offPin(p, z, undefined);
    }
  }

  const sizes = Math.min(bound.length, Math.floor(SEQUENCE_WORK_LIMIT / Math.max(1, zones.length)));
  const inList = new Set(zones);
  const keptZones = kept.slice(0, sizes).map((p) => {
    const z = zoneOfPod(p);
    return z !== undefined && inList.has(z) ? z : undefined;
  });
  const scaleDown = scaleDownRisk(keptZones, coveredByPrefix(zones, sizes, model));
  return judged({ ...base, domain: 'zone', scaleDown }, want, have, off);
}

/** Orders records as every view lists them: at risk first, then by namespace, kind, name. */
export function byRisk(a: WorkloadHealth, b: WorkloadHealth): number {
  return Number(b.atRisk) - Number(a.atRisk) || a.ref.namespace.localeCompare(b.ref.namespace) || a.ref.kind.localeCompare(b.ref.kind) || a.ref.name.localeCompare(b.ref.name);
}

/** Every managed workload's health (of one namespace, when given), at risk first. */
export function fleetHealth(snapshot: Snapshot, state: DecisionState, opts: HealthOptions, namespace?: string): WorkloadHealth[] {
  const out: WorkloadHealth[] = [];
  for (const { w, model } of managedModels(snapshot, state, namespace)) {
    const h = workloadHealth(model, w, snapshot, state, opts);
    if (h) out.push(h);
  }
  return out.sort(byRisk);
}
