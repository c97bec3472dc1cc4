import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { RolloutView } from './healthRecord.js';
import type { CachedModel } from './model.js';
import { budgetIn, downPodsAlwaysGo, parseBudget, podAvailable, seatMap, type ZoneBudget } from './zoneDisruption.js';

// A zone-by-zone rollout (docs/design.md#zone-by-zone-rollouts), planned from the cluster alone:
// which pods are on an old revision, which seats are down and where. The Lease holder evicts
// what a step names; health shows the same step in every replica. Nothing here is remembered.

/** The defaults (config zoneRollout) a workload's annotations override. */
export interface RolloutDefaults { maxUnavailable: string; batchGrowth: number; progressDeadlineSeconds: number }

export interface RolloutSettings {
  maxUnavailable: ZoneBudget; batchGrowth: number; progressDeadlineSeconds: number;
  /** zonekeeper.io/unhealthy-pod-eviction-policy AlwaysAllow: old pods already down go while another zone is down. */
  downAlwaysGo: boolean;
}

/** Opted in: the annotation is "true" on a StatefulSet or an Advanced StatefulSet. */
export function rolloutOptedIn(w: SlimWorkload): boolean {
  return (w.kind === 'StatefulSet' || w.kind === 'AdvancedStatefulSet') && w.annotations[ANNOTATION.zoneRollout] === 'true';
}

/**
 * The workload's settings: its annotations, else its zone disruption budget for maxUnavailable
 * (evictions beyond it would be refused), else the defaults. An error names a bad annotation.
 */
export function rolloutSettingsOf(w: SlimWorkload, defaults: RolloutDefaults): RolloutSettings | { error: string } {
  const a = w.annotations;
  const budgetKey = a[ANNOTATION.zoneRolloutMaxUnavailable] !== undefined ? ANNOTATION.zoneRolloutMaxUnavailable
    : a[ANNOTATION.zoneDisruptionBudget] !== undefined ? ANNOTATION.zoneDisruptionBudget : undefined;
  const maxUnavailable = parseBudget(budgetKey ? a[budgetKey]! : defaults.maxUnavailable, budgetKey ?? 'zoneRollout.maxUnavailable');
  if ('error' in maxUnavailable) return maxUnavailable;
  const integer = (key: string, fallback: number, min: number, max: number): number | { error: string } => {
    const raw = a[key];
    if (raw === undefined) return fallback;
    const n = /^\d{1,7}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    return n >= min && n <= max ? n : { error: `${key}: "${raw.slice(0, 40)}" is not a whole number from ${min} to ${max}` };
  };
  const batchGrowth = integer(ANNOTATION.zoneRolloutBatchGrowth, defaults.batchGrowth, 0, 10);
  if (typeof batchGrowth !== 'number') return batchGrowth;
  const progressDeadlineSeconds = integer(ANNOTATION.zoneRolloutProgressDeadline, defaults.progressDeadlineSeconds, 1, 86_400);
  if (typeof progressDeadlineSeconds !== 'number') return progressDeadlineSeconds;
  const downAlwaysGo = downPodsAlwaysGo(w);
  if (typeof downAlwaysGo !== 'boolean') return downAlwaysGo;
  return { maxUnavailable, batchGrowth, progressDeadlineSeconds, downAlwaysGo };
}

/**
 * A pause as the workload's annotation holds it: zonekeeper's record (for one revision) or a user's own value (any revision).
 * `waitsOn`: the pod of a seat the rollout does not replace that it paused on; available again, it ends the pause.
 */
export interface RolloutPause { revision: string | undefined; why: string; waitsOn?: string }

export function pauseOf(w: SlimWorkload): RolloutPause | undefined {
  const raw = w.annotations[ANNOTATION.zoneRolloutPaused];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (typeof v?.revision === 'string' && typeof v.why === 'string') {
      const waitsOn = typeof v.waitsOn === 'string' && v.waitsOn.length <= 253 ? { waitsOn: v.waitsOn } : {};
      return { revision: v.revision, why: v.why.slice(0, 512), ...waitsOn };
    }
  } catch { /* a user's own value */ }
  return { revision: undefined, why: `paused by hand (${ANNOTATION.zoneRolloutPaused}: "${raw.slice(0, 80)}")` };
}

/** zonekeeper's record of a pause: for `revision` only, so a new spec resumes it; so does `waitsOn`'s pod once available. */
export function pauseRecord(revision: string, at: number, why: string, waitsOn?: string): string {
  return JSON.stringify({ revision, at: new Date(at).toISOString(), why, ...(waitsOn !== undefined ? { waitsOn } : {}) });
}

/** Why zonekeeper's pause record no longer holds: a new revision, or the pod it waited on is available again. */
type PauseEnd = false | 'new-revision' | 'pod-available';

export type RolloutStep =
  | { kind: 'none'; why: string; clearPause: PauseEnd; view?: RolloutView }
  | { kind: 'wait'; why: string; view: RolloutView; clearPause: PauseEnd; recheckMs?: number }
  | { kind: 'paused'; why: string; view: RolloutView }
  | { kind: 'pause'; why: string; view: RolloutView; pod: string; waitsOn?: string; clearPause: PauseEnd }
  | { kind: 'evict'; why: string; view: RolloutView; pods: SlimPod[]; clearPause: PauseEnd };

/** Reasons a view lists; the rest are counted. */
const LISTED = 5;
const listed = (whats: readonly string[]) => (whats.length > LISTED ? [...whats.slice(0, LISTED), `and ${whats.length - LISTED} more`] : [...whats]);

/** The size of a zone's batch after `updated` of its pods are on the new revision: 1, f, f², … (f = 0: fixed at `max`). */
export function batchSize(growth: number, updated: number, max: number): { step: number; size: number } {
  if (growth === 0) return { step: Math.floor(updated / max) + 1, size: max };
  if (growth === 1) return { step: updated + 1, size: 1 };
  let step = 0, done = 0, size = 1;
  while (done + size <= updated && size < max) {
    done += size;
    size *= growth;
    step++;
  }
  if (size >= max) step += Math.floor((updated - done) / max);
  return { step: step + 1, size: Math.min(size, max) };
}

/**
 * Old pods in the order they go. With one old revision older than the update revision's pods: zones
 * in the list's order, the highest ordinal first. Otherwise (a new revision during a rollout, or a
 * rollback) the revisions whose oldest pod is newest go first, each the rollout's own: its pods
 * already down first, then the newest first (those of the interrupted rollout, the last updated first).
 */
function replacementOrder(old: readonly SlimPod[], updated: readonly SlimPod[], zoneOf: (p: SlimPod) => string | undefined,
  zones: readonly string[], isDown: (p: SlimPod) => boolean): SlimPod[] {
  const oldest = new Map<string, number>();
  for (const p of old) oldest.set(p.revision ?? '', Math.min(oldest.get(p.revision ?? '') ?? Infinity, p.createdAt));
  const ranked = [...oldest].sort((a, b) => b[1] - a[1]).map(([r]) => r);
  const rank = new Map(ranked.map((r, i) => [r, i]));
  // The oldest revision is rolled zone by zone unless the update revision has a pod older still (a rollback).
  const updatedSince = updated.reduce((m, p) => Math.min(m, p.createdAt), Infinity);
  const base = updatedSince < oldest.get(ranked.at(-1)!)! ? -1 : ranked.length - 1;
  const zoneIndex = (p: SlimPod) => { const i = zones.indexOf(zoneOf(p) ?? ''); return i < 0 ? zones.length : i; };
  return [...old].sort((a, b) => {
    const ra = rank.get(a.revision ?? '')!, rb = rank.get(b.revision ?? '')!;
    if (ra !== rb) return ra - rb;
    if (ra !== base) {
      const down = Number(isDown(b)) - Number(isDown(a));
      if (down !== 0) return down;
      if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
    }
    return zoneIndex(a) - zoneIndex(b) || b.ordinal - a.ordinal;
  });
}

/** When a not-available pod stopped being (or never was) available: its creation, or its Ready condition's last change. */
const downSince = (p: SlimPod) => Math.max(p.createdAt, p.readyChangedAt ?? 0);

/**
 * The next step of `w`'s rollout: nothing, a wait (and why), a pause, or a batch to evict.
 * `resumedAt`: when a user last resumed it (a pod's deadline counts from then at the earliest).
 */
export function rolloutStep(model: CachedModel, w: SlimWorkload, snapshot: Snapshot, settings: RolloutSettings, now: number,
  resumedAt = 0): RolloutStep {
  const u = w.update;
  if (!u?.onDelete) return { kind: 'none', why: 'spec.updateStrategy.type is not OnDelete: the StatefulSet controller rolls it itself', clearPause: false };
  const pause = pauseOf(w);
  const map = seatMap(model, w, snapshot);
  // zonekeeper's pause was for one revision: a new spec (a new updateRevision) ends it; so does the pod it waited on, available again.
  const clearPause: PauseEnd = pause?.revision === undefined ? false
    : u.updateRevision !== '' && pause.revision !== u.updateRevision ? 'new-revision'
      : pause.waitsOn !== undefined && map.holders.get(pause.waitsOn)?.available === true ? 'pod-available' : false;
  const holders = [...map.holders.values()];
  const old = holders.filter((h) => h.pod.revision !== u.updateRevision);
  const updated = holders.filter((h) => h.pod.revision === u.updateRevision);
  const view: RolloutView = {
    revision: u.updateRevision, zone: undefined, step: 0, batch: 0, replaced: updated.length, remaining: old.length,
    paused: pause && !clearPause ? pause.why : undefined, waitsFor: [],
  };
  const wait = (why: string, waitsFor: string[], recheckMs?: number): RolloutStep =>
    ({ kind: 'wait', why, view: { ...view, waitsFor: listed(waitsFor) }, clearPause, ...(recheckMs !== undefined ? { recheckMs } : {}) });
  if (!u.observed || u.updateRevision === '') {
    return wait('the StatefulSet controller has not reported the revision of the spec yet (status.observedGeneration)', ['status.updateRevision']);
  }
  if (old.length === 0) return { kind: 'none', why: `every pod is on revision ${u.updateRevision}`, clearPause, view };
  if (view.paused !== undefined) return { kind: 'paused', why: view.paused, view };

  // A pod this rollout made not available within the deadline pauses it. Under OnDelete a pod made since the
  // update revision appeared gets it, so every old pod is older; a pod of the new revision older than the oldest
  // old pod was not made by it (a rollback's zones never updated): down, it is an outage to wait for, not the revision's fault.
  const deadlineMs = settings.progressDeadlineSeconds * 1000;
  const started = old.reduce((m, h) => Math.min(m, h.pod.createdAt), Infinity);
  let recheckMs: number | undefined;
  for (const h of updated) {
    if (h.available || h.pod.createdAt < started) continue;
    const since = Math.max(downSince(h.pod), resumedAt);
    const left = since + deadlineMs - now;
    if (left <= 0) {
      const why = `pod ${h.pod.name}${h.zone ? ` in ${h.zone}` : ''} (revision ${u.updateRevision}) not available ${Math.round((now - downSince(h.pod)) / 1000)}s after it ${since === h.pod.createdAt ? 'was created' : 'last changed'}; the progress deadline is ${settings.progressDeadlineSeconds}s`;
      return { kind: 'pause', why, view: { ...view, paused: why }, pod: h.pod.name, clearPause };
    }
    recheckMs = Math.min(recheckMs ?? Infinity, left);
  }

  const zones = model.zones().zones;
  const order = replacementOrder(old.map((h) => h.pod), updated.map((h) => h.pod), (p) => map.holders.get(p.name)?.zone, zones,
    (p) => !p.terminating && !podAvailable(p, snapshot));
  const zone = map.holders.get(order[0]!.name)?.zone;
  if (zone === undefined) return wait(`pod ${order[0]!.name} is in no known zone yet`, [`pod ${order[0]!.name} bound`], recheckMs);
  const here = map.zones.get(zone)!;
  const allowed = budgetIn(settings.maxUnavailable, here.seats);
  const { step, size } = batchSize(settings.batchGrowth, updated.filter((h) => h.zone === zone).length, allowed);
  const inZone = order.filter((p) => map.holders.get(p.name)?.zone === zone);
  Object.assign(view, { zone, step, batch: Math.min(size, inZone.length) });
  // No pod of this zone goes while a seat elsewhere is down; none while a batch here is under way.
  const elsewhere = [...map.zones].filter(([z]) => z !== zone).flatMap(([z, s]) => s.down.map((d) => `${d.what} (${z})`));
  if (map.unplaced) elsewhere.push(map.unplaced.what);
  // A wait on a seat this rollout does not replace, down past the progress deadline, pauses it: it never waits silently.
  const stuckOn = (lead: string, downs: readonly { pod?: string; what: string }[]): RolloutStep | undefined => {
    for (const d of downs) {
      const h = d.pod === undefined ? undefined : map.holders.get(d.pod);
      // Terminating, or no pod: the controllers' to finish (not judged); a pod the rollout made: its progress deadline above.
      if (!h || (h.pod.revision === u.updateRevision && h.pod.createdAt >= started)) continue;
      const left = Math.max(downSince(h.pod), resumedAt) + deadlineMs - now;
      if (left > 0) {
        recheckMs = Math.min(recheckMs ?? Infinity, left);
        continue;
      }
      const why = `${lead}; it waits on a seat down ${Math.round((now - downSince(h.pod)) / 1000)}s, past the progress deadline (${settings.progressDeadlineSeconds}s), that this rollout does not replace: ${d.what}`;
      return { kind: 'pause', why, view: { ...view, paused: why }, pod: h.pod.name, waitsOn: h.pod.name, clearPause };
    }
    return undefined;
  };
  if (elsewhere.length > 0) {
    // Under AlwaysAllow its old pods already down are replaced meanwhile (a rollback of a crash-looping revision during an
    // outage); one terminating is on its way (on a lost node it may stay so): not evicted again at every step.
    const downHere = settings.downAlwaysGo ? inZone.filter((p) => !p.terminating && !podAvailable(p, snapshot)) : [];
    if (downHere.length === 0) {
      const downs = [...map.zones].filter(([z]) => z !== zone).flatMap(([z, s]) => s.down.map((d) => ({ ...d, what: `${d.what} (${z})` })));
      return stuckOn(`${zone} is next`, downs)
        ?? wait(`${zone} is next; it waits until every seat outside it is available`, elsewhere, recheckMs);
    }
    return {
      kind: 'evict', view: { ...view, batch: downHere.length }, pods: downHere, clearPause,
      why: `${zone}: its ${downHere.length} old pod${downHere.length === 1 ? '' : 's'} already down (${ANNOTATION.unhealthyPodEvictionPolicy} AlwaysAllow; replacing them takes nothing more down) to revision ${u.updateRevision}, while ${elsewhere[0]}${elsewhere.length > 1 ? ` and ${elsewhere.length - 1} more` : ''}`,
    };
  }
  const isOldDown = (d: { pod?: string }) => d.pod !== undefined && old.some((h) => h.pod.name === d.pod);
  const underWay = here.down.filter((d) => !isOldDown(d));
  if (underWay.length > 0) {
    return stuckOn(`a batch in ${zone} is under way`, underWay) ?? wait(`a batch in ${zone} is under way`, underWay.map((d) => d.what), recheckMs);
  }
  // Each batch waits for minReadySeconds of the pods it made (any zone: the last one's too).
  const minReadyMs = u.minReadySeconds * 1000;
  const settling = updated.filter((h) => h.available && now - (h.pod.readyChangedAt ?? 0) < minReadyMs);
  if (settling.length > 0) {
    const left = Math.min(...settling.map((h) => (h.pod.readyChangedAt ?? 0) + minReadyMs - now));
    return wait(`pods of revision ${u.updateRevision} Ready for less than minReadySeconds (${u.minReadySeconds})`, settling.map((h) => `pod ${h.pod.name} Ready for minReadySeconds`),
      Math.min(left, recheckMs ?? Infinity));
  }

  // Old pods already down go first: replacing them takes nothing more down.
  const down = inZone.filter((p) => !podAvailable(p, snapshot));
  const up = inZone.filter((p) => podAvailable(p, snapshot));
  const pods = [...down, ...up.slice(0, Math.max(0, Math.min(size, allowed) - down.length))];
  const batchView = { ...view, step, batch: pods.length };
  return {
    kind: 'evict', view: batchView, pods, clearPause,
    why: `${zone}, batch ${step} (${pods.length} of its ${inZone.length} old pods; at most ${allowed} of ${here.seats} seats at once) to revision ${u.updateRevision}`,
  };
}

/** What health shows of an opted-in workload's rollout: undefined when none is under way or paused (or its annotations are bad). */
export function rolloutView(model: CachedModel, w: SlimWorkload, snapshot: Snapshot, defaults: RolloutDefaults, now: number): RolloutView | undefined {
  if (!rolloutOptedIn(w) || model.policy === 'none') return undefined;
  const settings = rolloutSettingsOf(w, defaults);
  if ('error' in settings) return undefined;
  const s = rolloutStep(model, w, snapshot, settings, now);
  return s.kind === 'none' ? undefined : s.view;
}

/** One line of a rollout under way, for a health record's reason (the page and `audit` show it); undefined without one. */
export function rolloutLine(v: RolloutView | undefined): string | undefined {
  if (!v) return undefined;
  const where = `rolling out ${v.revision} a zone at a time: ${v.replaced} replaced, ${v.remaining} to go${v.zone ? `; zone ${v.zone}, batch ${v.step} of ${v.batch} pod${v.batch === 1 ? '' : 's'}` : ''}`;
  if (v.paused) return `${where}; paused: ${v.paused}`;
  return v.waitsFor.length > 0 ? `${where}; waits for ${v.waitsFor.slice(0, 2).join('; ')}` : where;
}
