import { ANNOTATION } from '../cluster/annotations.js';
import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { DisruptionState } from './healthRecord.js';
import type { CachedModel } from './model.js';
import { expectedOrdinals, workloadLivePods } from './workload.js';
import { seatZones } from './zoneSequence.js';

// A disruption is a seat going empty (docs/design.md#zone-at-a-time): the seat map that places
// pods also says which zone each disruption hits. One reading of it serves the eviction gate,
// repair, Adaptive rescheduling and zone-by-zone rollouts.

/** How many of a zone's seats may be down at once: the whole zone, a count, or a share of its seats. */
export type ZoneBudget = { kind: 'zone' } | { kind: 'count'; n: number } | { kind: 'percent'; p: number };

/** The workload's `zonekeeper.io/zone-disruption-budget`: undefined without it (not opted in), an error naming a bad value. */
export function zoneBudgetOf(w: SlimWorkload | undefined): ZoneBudget | { error: string } | undefined {
  const raw = w?.annotations[ANNOTATION.zoneDisruptionBudget];
  if (raw === undefined) return undefined;
  return parseBudget(raw, ANNOTATION.zoneDisruptionBudget);
}

/**
 * Whether a pod already down may go while another zone is down: `zonekeeper.io/unhealthy-pod-eviction-policy`,
 * named and valued as a PodDisruptionBudget's unhealthyPodEvictionPolicy. By default (IfHealthyBudget) it waits,
 * as a pod about to be Ready is spared; AlwaysAllow lets a crash-looping revision be replaced during an outage.
 */
export function downPodsAlwaysGo(w: SlimWorkload): boolean | { error: string } {
  const raw = w.annotations[ANNOTATION.unhealthyPodEvictionPolicy];
  if (raw === undefined || raw.trim() === 'IfHealthyBudget') return false;
  if (raw.trim() === 'AlwaysAllow') return true;
  return { error: `${ANNOTATION.unhealthyPodEvictionPolicy}: "${raw.slice(0, 40)}" is not IfHealthyBudget or AlwaysAllow` };
}

/** "zone", a count or a percentage (a rollout's per-zone maxUnavailable reads the same). */
export function parseBudget(raw: string, what: string): ZoneBudget | { error: string } {
  const v = raw.trim();
  if (v === 'zone' || v === '100%') return { kind: 'zone' };
  const count = /^([1-9]\d{0,5})$/.exec(v);
  if (count) return { kind: 'count', n: Number(count[1]) };
  const pct = /^([1-9]\d?)%$/.exec(v);
  if (pct) return { kind: 'percent', p: Number(pct[1]) };
  return { error: `${what}: "${v.slice(0, 40)}" is not "zone", a count (1, 2, …) or a percentage (1%–100%)` };
}

/** How many of a zone's `seats` may be down at once under `budget` (a percentage rounds up, as a PDB's maxUnavailable; at least 1). */
export function budgetIn(budget: ZoneBudget, seats: number): number {
  if (budget.kind === 'zone') return Math.max(1, seats);
  if (budget.kind === 'count') return budget.n;
  return Math.max(1, Math.ceil((seats * budget.p) / 100));
}

/** A seat that is not available, in words (its pod, or the ordinal that has none). */
interface DownSeat { pod?: string; what: string }

/** A pod holding a seat: its zone (undefined: not known yet) and whether it is available. */
interface SeatHolder { pod: SlimPod; zone: string | undefined; available: boolean }

/** Per zone of a workload: how many seats it has and which are down; seats down in no known zone; the seat holders by name. */
export interface SeatMap {
  zones: Map<string, { seats: number; down: DownSeat[] }>;
  /** Replicas with no pod whose zone cannot be told (a Deployment's not created yet): how many, and the words. */
  unplaced: { count: number; what: string } | undefined;
  holders: Map<string, SeatHolder>;
}

/** Available: Ready, on a Ready node, not terminating (what a PodDisruptionBudget counts, and the node's state too). */
export function podAvailable(pod: SlimPod, snapshot: Snapshot): boolean {
  if (!pod.ready || pod.terminating || pod.finished || !pod.nodeName) return false;
  return snapshot.node(pod.nodeName)?.ready === true;
}

function whyDown(pod: SlimPod, snapshot: Snapshot): string {
  if (pod.terminating) return `pod ${pod.name} is terminating`;
  if (!pod.nodeName) return `pod ${pod.name} is Pending`;
  if (snapshot.node(pod.nodeName)?.ready !== true) return `pod ${pod.name} is on node ${pod.nodeName}, which is not Ready`;
  return `pod ${pod.name} is not Ready`;
}

/** Missing ordinals listed one by one at most this many past the pods there are: `replicas` is a number in an object. */
const MISSING_LISTED = 64;

/**
 * Where each seat of a managed workload is and whether it is up. A pod's zone is its node's; an
 * unbound pod's, the zone written into its spec, else its seat's; a seat with no pod at all (an
 * ordinal missing) is down in its seat's zone, and a missing replica of a workload whose pods
 * have no fixed seat is down in a zone not known yet.
 */
export function seatMap(model: CachedModel, w: SlimWorkload, snapshot: Snapshot): SeatMap {
  const list = model.zones();
  const pinOf = model.seats === 'none' ? undefined : seatZones(list.zones, model.preferences.sequence);
  const seatZoneOf = (index: number) => (index >= 0 ? pinOf?.(index).zone : undefined);
  const zones = new Map<string, { seats: number; down: DownSeat[] }>();
  const at = (z: string) => zones.get(z) ?? zones.set(z, { seats: 0, down: [] }).get(z)!;
  const holders = new Map<string, SeatHolder>();
  const live = workloadLivePods(model.ref, snapshot);
  const indexes = live.map((pod) => model.seat(pod).index);
  const seated = new Set<number>();
  for (const [i, pod] of live.entries()) if (!pod.terminating) seated.add(indexes[i]!);
  const leaving = new Set<number>();
  let up = 0;
  let downKnown = 0;
  for (const [i, pod] of live.entries()) {
    const index = indexes[i]!;
    // A terminating pod whose successor already holds its seat is not a second seat.
    if (pod.terminating && index >= 0 && seated.has(index)) continue;
    const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
    const zone = (node && zoneOf(node, list.topologyKey)) ?? pod.selection?.nodeSelector[list.topologyKey] ?? seatZoneOf(index);
    const available = podAvailable(pod, snapshot);
    if (pod.terminating) leaving.add(index);
    else holders.set(pod.name, { pod, zone, available });
    if (zone !== undefined) at(zone).seats++;
    if (available) up++;
    else if (zone !== undefined) {
      at(zone).down.push({ pod: pod.name, what: whyDown(pod, snapshot) });
      downKnown++;
    }
  }
  if (model.seats === 'ordinal') {
    for (const ordinal of expectedOrdinals(w, Math.min(w.replicas, live.length + MISSING_LISTED))) {
      const index = ordinal - w.ordinalsStart;
      if (seated.has(index) || leaving.has(index)) continue;
      const zone = seatZoneOf(index);
      if (zone === undefined) continue;
      at(zone).seats++;
      at(zone).down.push({ what: `ordinal ${ordinal} has no pod` });
      downKnown++;
    }
  }
  // What is down and in no zone above: replicas with no pod yet (a Deployment's; ordinals past those listed), pods in no known zone.
  const count = Math.max(0, w.replicas - up - downKnown);
  const unplaced = count > 0 ? { count, what: `${count} of ${w.replicas} replicas have no available pod in a known zone` } : undefined;
  return { zones, unplaced, holders };
}

/** An approval the eviction gate recorded on the workload before answering: the pod, its zone, when. */
export interface Approval { pod: string; uid: string; zone: string; at: number }

/** How many approvals a record is read for: the workload's pods bound them. */
export const approvalsLimit = (map: SeatMap) => 2 * map.holders.size + 16;

/** Approvals read back from the workload's annotation: what is not one is dropped, at most `limit` (the workload's pods bound them). */
export function parseApprovals(text: string | undefined, limit: number): Approval[] {
  if (!text) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: Approval[] = [];
  // The newest last, as they are written: a record longer than the limit keeps its newest.
  for (const a of raw.slice(-limit)) {
    if (typeof a !== 'object' || a === null) continue;
    const { pod, uid, zone, at } = a as Record<string, unknown>;
    const when = typeof at === 'string' ? Date.parse(at) : NaN;
    if (typeof pod === 'string' && typeof uid === 'string' && typeof zone === 'string' && Number.isFinite(when)) out.push({ pod, uid, zone, at: when });
  }
  return out;
}

export function formatApprovals(approvals: readonly Approval[]): string {
  return JSON.stringify(approvals.map((a) => ({ pod: a.pod, uid: a.uid, zone: a.zone, at: new Date(a.at).toISOString() })));
}

/**
 * The approvals still in force: one whose pod still stands unharmed after `approvalMs` never
 * became an eviction (a PodDisruptionBudget refused it, the client gave up); one whose pod went
 * holds its zone until that zone has nothing down and no replica is unplaced (its successor is up).
 */
export function liveApprovals(approvals: readonly Approval[], map: SeatMap, now: number, approvalMs: number): Approval[] {
  return approvals.filter((a) => {
    const holder = map.holders.get(a.pod);
    const standing = holder !== undefined && holder.pod.uid === a.uid;
    // A time ahead of this clock (another holder's skew, a hand-written record) counts from now: it lapses all the same.
    if (standing) return now - Math.min(a.at, now) < approvalMs && a.at <= now + approvalMs;
    return (map.zones.get(a.zone)?.down.length ?? 0) > 0 || map.unplaced !== undefined;
  });
}

/** The gate's answer for one eviction: allowed (and the approvals to record), or refused with what it waits for. */
export type EvictionVerdict =
  | { allowed: true; zone: string | undefined; approvals: Approval[]; why: string }
  | { allowed: false; zone: string | undefined; why: string; waitsFor: string[] };

/**
 * Down seats of each zone as the gate counts them: the seat map's, approvals not yet seen as
 * evictions, unplaced replicas charged to the zone the approvals name.
 */
function downByZone(map: SeatMap, live: readonly Approval[]): { down: Map<string, string[]>; unknown: string[] } {
  const down = new Map<string, string[]>();
  const add = (z: string, what: string) => (down.get(z) ?? down.set(z, []).get(z)!).push(what);
  for (const [z, { down: d }] of map.zones) for (const s of d) add(z, s.what);
  for (const a of live) {
    const holder = map.holders.get(a.pod);
    if (holder?.available && holder.pod.uid === a.uid) add(a.zone, `pod ${a.pod} is being evicted`);
  }
  const unknown: string[] = [];
  if (map.unplaced) {
    // A replica that went through an approval and has no pod yet belongs to the approval's zone.
    const approved = new Set(live.map((a) => a.zone));
    if (approved.size === 1) add([...approved][0]!, map.unplaced.what);
    else unknown.push(map.unplaced.what);
  }
  return { down, unknown };
}

/** The zone an approval names for an available pod whose node carries no zone: it counts as a zone of its own. */
const NO_ZONE = '(no zone)';

/** At most this many reasons named in a refusal: the rest are counted. */
const NAMED = 3;
const named = (whats: readonly string[]) => whats.slice(0, NAMED).join('; ') + (whats.length > NAMED ? `; and ${whats.length - NAMED} more` : '');

/**
 * Whether `podName` of the workload `what` may be evicted now (docs/design.md#zone-at-a-time):
 * every seat in every other zone available, and its own zone within `budget`. Allowed answers
 * carry the approvals to record, this one included.
 */
export function evictionVerdict(what: string, map: SeatMap, recorded: readonly Approval[], podName: string, budget: ZoneBudget,
  now: number, approvalMs: number, downAlwaysGo = false): EvictionVerdict {
  const live = liveApprovals(recorded, map, now, approvalMs);
  const holder = map.holders.get(podName);
  if (!holder) return { allowed: true, zone: undefined, approvals: live, why: `${podName} holds no seat of ${what}: evicting it takes no seat down` };
  // An available pod in no known zone is recorded all the same (under NO_ZONE): every eviction that goes is a conditional write.
  const zone = holder.zone ?? (holder.available ? NO_ZONE : undefined);
  if (live.some((a) => a.pod === podName && a.uid === holder.pod.uid)) {
    return { allowed: true, zone, approvals: live, why: `already approved: ${podName} of ${what} in ${zone}` };
  }
  if (!holder.available && downAlwaysGo) {
    return { allowed: true, zone, approvals: live, why: `${podName} is down already (${ANNOTATION.unhealthyPodEvictionPolicy} AlwaysAllow): evicting it takes nothing more down` };
  }
  const { down, unknown } = downByZone(map, live);
  const elsewhere = [...down].filter(([z]) => z !== zone);
  const waits = [...elsewhere.flatMap(([z, w]) => w.map((x) => `${x} (${z})`)), ...unknown];
  if (waits.length > 0) {
    const zonesDown = [...elsewhere.map(([z]) => z), ...(unknown.length > 0 ? ['a zone not known yet'] : [])];
    // Said where it is needed: a rollback stuck behind another zone's outage.
    const hint = holder.available ? '' : `; ${podName} is down already: with ${ANNOTATION.unhealthyPodEvictionPolicy}: AlwaysAllow it would go now`;
    return {
      allowed: false, zone, waitsFor: waits,
      why: `zone disruption budget of ${what}: ${zonesDown.join(', ')} ${zonesDown.length > 1 ? 'are' : 'is'} under disruption; pod ${podName} of ${zone ?? 'an unknown zone'} may go once every seat outside it is available: waits for ${named(waits)}${hint}`,
    };
  }
  // A pod already down takes nothing more down: no other zone is, so it may go whatever its own zone's count.
  if (!holder.available || zone === undefined) return { allowed: true, zone, approvals: live, why: `${podName} is down already and no other zone is: evicting it takes nothing more down` };
  const seats = map.zones.get(zone)?.seats ?? 0;
  const inZone = down.get(zone) ?? [];
  const allowedDown = budgetIn(budget, seats);
  const after = inZone.length + 1;
  if (after > allowedDown) {
    return {
      allowed: false, zone, waitsFor: inZone,
      why: `zone disruption budget of ${what}: ${zone} has ${inZone.length} of its ${seats} seats down, at most ${allowedDown} at once; pod ${podName} waits for ${named(inZone)}`,
    };
  }
  const approvals = [...live, { pod: podName, uid: holder.pod.uid, zone, at: now }];
  return { allowed: true, zone, approvals, why: `${zone} may lose ${allowedDown} of ${seats} seats; ${after} down with ${podName}` };
}

/** The zones with seats down, in words, for health and the views; undefined for a workload not opted in. */
export function disruptionState(model: CachedModel, w: SlimWorkload, snapshot: Snapshot): DisruptionState | undefined {
  const budget = w.annotations[ANNOTATION.zoneDisruptionBudget];
  if (budget === undefined) return undefined;
  const map = seatMap(model, w, snapshot);
  const down: DisruptionState['down'] = [];
  for (const [zone, z] of map.zones) if (z.down.length > 0) down.push({ zone, count: z.down.length, what: z.down.slice(0, NAMED).map((d) => d.what) });
  if (map.unplaced) down.push({ zone: 'unknown', count: map.unplaced.count, what: [map.unplaced.what] });
  const approvals = parseApprovals(w.annotations[ANNOTATION.disruptionApprovals], approvalsLimit(map)).length;
  const parsed = zoneBudgetOf(w);
  const policy = downPodsAlwaysGo(w);
  const error = parsed && 'error' in parsed ? parsed.error : typeof policy !== 'boolean' ? policy.error : undefined;
  return { budget, ...(error ? { error } : {}), down: down.sort((a, b) => a.zone.localeCompare(b.zone)), approvals };
}

/** One line of a disruption under way, for a health record's reason; undefined when no seat is down. */
export function disruptionLine(d: DisruptionState | undefined): string | undefined {
  if (d?.error) return `${d.error}: every eviction of its pods is refused until it does`;
  if (!d || d.down.length === 0) return undefined;
  const zones = d.down.map((z) => `${z.zone} (${z.what[0]}${z.count > 1 ? `, ${z.count} down` : ''})`).join(', ');
  return `under disruption: ${zones}; evictions in other zones wait (zone disruption budget ${d.budget})`;
}
