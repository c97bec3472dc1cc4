import { ANNOTATION } from '../cluster/annotations.js';
import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { DisruptionState } from './healthRecord.js';
import { approvalsOverBound, liveApprovals, parseApprovals, standing, type Approval } from './disruptionApprovals.js';
import type { CachedModel } from './model.js';
import { boundZone, ordinalVolumeZone, podVolumes } from './volumes.js';
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
  /** The names counted as a seat above (pods, missing ordinals): an approval naming one is not charged an unplaced replica. */
  counted: Set<string>;
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
 * Where each seat of a workload is and whether it is up. A pod's zone is its node's; an unbound
 * pod's, the zone written into its spec, else its bound volume's, else the zone the approval of
 * its name recorded, else its seat's; a seat with no pod at all (an ordinal missing) is down in
 * its bound claims' zone, else its approval's, else its seat's; a missing replica of a workload
 * whose pods have no fixed seat is down in a zone not known yet. Seats are pins only where a
 * placement policy covers the workload (docs/design.md#the-zone-disruption-budget).
 */
export function seatMap(model: CachedModel, w: SlimWorkload, snapshot: Snapshot, approvals: readonly Approval[] = []): SeatMap {
  const list = model.zones();
  const key = list.topologyKey;
  const pinOf = model.seats === 'none' || model.policy === 'none' ? undefined : seatZones(list.zones, model.preferences.sequence);
  const seatZoneOf = (index: number) => (index >= 0 ? pinOf?.(index).zone : undefined);
  const approvedZone = new Map(approvals.map((a) => [a.pod, a.zone]));
  const zones = new Map<string, { seats: number; down: DownSeat[] }>();
  const at = (z: string) => zones.get(z) ?? zones.set(z, { seats: 0, down: [] }).get(z)!;
  const holders = new Map<string, SeatHolder>();
  const counted = new Set<string>();
  const live = workloadLivePods(model.ref, snapshot);
  const indexes = live.map((pod) => model.seat(pod).index);
  const seated = new Set<number>();
  for (const [i, pod] of live.entries()) if (!pod.terminating) seated.add(indexes[i]!);
  // As a PDB counts: a terminating pod without a seat is a seat going empty only while fewer pods stand than replicas.
  let emptying = model.seats === 'none' ? Math.max(0, w.replicas - live.filter((p) => !p.terminating).length) : Infinity;
  const leaving = new Set<number>();
  let up = 0;
  let downKnown = 0;
  for (const [i, pod] of live.entries()) {
    const index = indexes[i]!;
    // A terminating pod whose successor already holds its seat is not a second seat.
    if (pod.terminating && index >= 0 && seated.has(index)) continue;
    if (pod.terminating && model.seats === 'none' && emptying-- <= 0) continue;
    const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
    const zone = (node && zoneOf(node, key)) ?? pod.selection?.nodeSelector[key]
      ?? (node || pod.claims.length === 0 ? undefined : boundZone(podVolumes(pod, snapshot).constraints, snapshot, key))
      ?? (node ? undefined : approvedZone.get(pod.name)) ?? seatZoneOf(index);
    const available = podAvailable(pod, snapshot);
    counted.add(pod.name);
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
      const name = `${w.name}-${ordinal}`;
      const zone = ordinalVolumeZone(w, ordinal, snapshot, key) ?? approvedZone.get(name) ?? seatZoneOf(index);
      if (zone === undefined) continue;
      counted.add(name);
      at(zone).seats++;
      at(zone).down.push({ what: `ordinal ${ordinal} has no pod` });
      downKnown++;
    }
  }
  // What is down and in no zone above: replicas with no pod yet (a Deployment's; ordinals past those listed), pods in no known zone.
  const count = Math.max(0, w.replicas - up - downKnown);
  const unplaced = count > 0 ? { count, what: `${count} of ${w.replicas} replicas have no available pod in a known zone` } : undefined;
  return { zones, unplaced, holders, counted };
}

/** The gate's answer for one eviction: allowed (and the approvals to record), or refused with what it waits for. */
export type EvictionVerdict =
  /** `downAlready`: allowed only as the pod is down now; the eviction must not go if it turned Ready since (docs/design.md#the-zone-disruption-budget). */
  | { allowed: true; zone: string | undefined; approvals: Approval[]; why: string; downAlready?: boolean }
  | { allowed: false; zone: string | undefined; why: string; waitsFor: string[] };

/**
 * Down seats of each zone as the gate counts them: the seat map's, approvals not yet seen as
 * evictions, and of the unplaced replicas as many as approved pods have gone, each charged to
 * its approval's zone; the rest are in a zone not known yet.
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
  let left = map.unplaced?.count ?? 0;
  // A replica that went through an approval and has no pod in a known zone yet belongs to the approval's zone.
  for (const a of [...live].reverse()) {
    if (left === 0) break;
    if (standing(a, map) || map.counted.has(a.pod)) continue;
    add(a.zone, `the replacement of pod ${a.pod} has no available pod yet`);
    left--;
  }
  if (left > 0) unknown.push(left === map.unplaced!.count ? map.unplaced!.what : `${left} more replicas have no available pod in a known zone`);
  return { down, unknown };
}

/** The zone an approval names for an available pod whose node carries no zone: it counts as a zone of its own. */
const NO_ZONE = '(no zone)';

/** At most this many reasons named in a refusal: the rest are counted. */
const NAMED = 3;
const named = (whats: readonly string[]) => whats.slice(0, NAMED).join('; ') + (whats.length > NAMED ? `; and ${whats.length - NAMED} more` : '');

/** How an eviction is judged beyond the budget: the workload's unhealthy-pod policy; which lapses of approvals a live read confirmed. */
export interface VerdictOptions {
  downAlwaysGo?: boolean;
  /** An approval whose pod the cache shows standing past its time lapses only if this says so (a live read saw the pod stand). */
  lapseConfirmed?: (a: Approval) => boolean;
}

/**
 * Whether `podName` of the workload `what` may be evicted now (docs/design.md#zone-at-a-time):
 * every seat in every other zone available, and its own zone within `budget`. Every ask is
 * judged again, a retry too (as kube-apiserver re-checks every eviction); allowed answers carry
 * the approvals to record, this one's renewed.
 */
export function evictionVerdict(what: string, map: SeatMap, recorded: readonly Approval[], podName: string, budget: ZoneBudget,
  now: number, approvalMs: number, o: VerdictOptions = {}): EvictionVerdict {
  const live = liveApprovals(recorded, map, now, approvalMs, o.lapseConfirmed);
  const holder = map.holders.get(podName);
  if (!holder) return { allowed: true, zone: undefined, approvals: live, why: `${podName} holds no seat of ${what}: evicting it takes no seat down` };
  // An available pod in no known zone is recorded all the same (under NO_ZONE): every eviction that goes is a conditional write.
  const zone = holder.zone ?? (holder.available ? NO_ZONE : undefined);
  // Its own earlier approval is set aside: judged as if first asked, and renewed when allowed.
  const others = live.filter((a) => !(a.pod === podName && a.uid === holder.pod.uid));
  const retry = others.length < live.length ? ' (asked again: judged again, its approval renewed)' : '';
  if (!holder.available && o.downAlwaysGo) {
    return { allowed: true, zone, approvals: others, downAlready: true, why: `${podName} is down already (${ANNOTATION.unhealthyPodEvictionPolicy} AlwaysAllow): evicting it takes nothing more down` };
  }
  const { down, unknown } = downByZone(map, others);
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
  if (!holder.available || zone === undefined) {
    return { allowed: true, zone, approvals: others, downAlready: true, why: `${podName} is down already and no other zone is: evicting it takes nothing more down` };
  }
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
  const approvals = [...others, { pod: podName, uid: holder.pod.uid, zone, at: now }];
  const over = approvalsOverBound(approvals);
  if (over) {
    return {
      allowed: false, zone, waitsFor: [],
      why: `zone disruption budget of ${what}: its ${ANNOTATION.disruptionApprovals} would hold ${over}: too many evictions not yet seen through; pod ${podName} waits until evicted pods are replaced`,
    };
  }
  return { allowed: true, zone, approvals, why: `${zone} may lose ${allowedDown} of ${seats} seats; ${after} down with ${podName}${retry}` };
}

/** The zones with seats down, in words, for health and the views; undefined for a workload not opted in. */
export function disruptionState(model: CachedModel, w: SlimWorkload, snapshot: Snapshot): DisruptionState | undefined {
  const budget = w.annotations[ANNOTATION.zoneDisruptionBudget];
  if (budget === undefined) return undefined;
  const recorded = parseApprovals(w.annotations[ANNOTATION.disruptionApprovals]);
  const map = seatMap(model, w, snapshot, recorded);
  const down: DisruptionState['down'] = [];
  for (const [zone, z] of map.zones) if (z.down.length > 0) down.push({ zone, count: z.down.length, what: z.down.slice(0, NAMED).map((d) => d.what) });
  if (map.unplaced) down.push({ zone: 'unknown', count: map.unplaced.count, what: [map.unplaced.what] });
  const approvals = recorded.length;
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
