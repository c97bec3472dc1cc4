import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { ExpiringMap } from '../expiringMap.js';
import type { Actuator } from '../actuator/actuator.js';
import type { PendingPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import { firstSeatCounts } from '../placement/fleet.js';
import type { LayoutDeps } from '../placement/layout.js';
import { Reservations } from '../placement/reservations.js';
import { clipReason, type Candidates, type FilterInput, type FilterVerdict, type PlacementSettings } from '../placement/verdict.js';

export interface PinConflict {
  pod: string;
  workload: string;
  pinnedZone: string;
  volumeZones: string[];
  reason: string;
  at: string;
}

/**
 * What decisions remember between requests: reservations, how long pods have waited,
 * Adaptive subsets marked unschedulable, conflicts seen. Placement stays pure; `apply`
 * carries out the effects a verdict asks for, and nothing else changes this state.
 */
export class PlacementState implements LayoutDeps {
  readonly settings: PlacementSettings;
  readonly reservations: Reservations;
  private readonly waitingSince: ExpiringMap<string, number>;
  private readonly unschedulable: LRUCache<string, number>;
  private readonly conflictsSeen = new LRUCache<string, PinConflict>({ max: 10_000 });
  private readonly reportedPreferences = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    config: Config, private readonly source: SnapshotSource, private readonly actuator: Actuator,
    private readonly metrics: Metrics, private readonly log: Logger, private readonly clock: { now(): number },
  ) {
    this.settings = { ...config.placement };
    this.reservations = new Reservations(config.placement.reservationTtlSeconds, clock);
    this.waitingSince = new ExpiringMap({ max: 100_000, ttlMs: 3_600_000, clock });
    this.unschedulable = new LRUCache({ max: 10_000, ttl: config.placement.adaptiveUnschedulableSeconds * 1000, perf: clock });
    // A reservation ends when the watch shows the pod bound or gone (design §8).
    source.store.onPod((type, pod) => {
      if (type === 'delete' || pod.nodeName) this.reservations.release(pod.uid);
      if (type === 'delete') this.waitingSince.delete(pod.uid);
    });
  }

  readonly pendingFreeze = (key: string) => this.actuator.pendingFreeze(key);
  readonly unschedulableUntil = (key: string) => this.unschedulable.get(key);
  conflicts(): PinConflict[] {
    return [...this.conflictsSeen.values()];
  }

  /** The inputs of one filter or prioritize call. */
  inputOf(pod: PendingPod, candidates: Candidates): FilterInput {
    const { source, actuator } = this;
    return {
      pod, candidates, snapshot: source.snapshot, reservations: this.reservations, settings: this.settings, now: this.clock.now(),
      waitingSince: this.waitingSince.get(pod.uid),
      pendingFreeze: this.pendingFreeze,
      firstSeats: () => firstSeatCounts(source.snapshot, actuator.pendingFreezes()),
      unschedulableUntil: this.unschedulableUntil,
    };
  }

  /** Carries out a filter verdict's effects: the only writer of this state and of zone freezes. */
  apply(input: FilterInput, v: FilterVerdict): void {
    if (!v.managed || !v.model) return;
    const { pod, now } = input;
    const { key, ref } = v.model;
    const workloadLabel = { namespace: ref.namespace, workload: `${ref.kind}/${ref.name}` };
    if (v.passed.length > 0) this.waitingSince.delete(pod.uid);
    else if (!this.waitingSince.has(pod.uid)) this.waitingSince.set(pod.uid, now);
    const e = v.effects;
    if (e.reserve) this.reservations.reserve({ uid: pod.uid, pod: `${pod.namespace}/${pod.name}`, workload: key, zone: e.reserve.zone, subset: e.reserve.subset, at: now });
    if (e.freeze) this.actuator.freezeZones(e.freeze.workload, e.freeze.zones);
    const workload = v.model.workload;
    if (e.markUnschedulable) {
      this.unschedulable.set(e.markUnschedulable.key, e.markUnschedulable.until, { ttl: Math.max(1, e.markUnschedulable.until - now) });
      this.log.info({ subset: e.markUnschedulable.key, pod: `${pod.namespace}/${pod.name}` }, 'Adaptive WorkloadSpread: subset marked unschedulable');
      const seconds = Math.round((e.markUnschedulable.until - now) / 1000);
      if (workload) this.actuator.recordEvent(workload, 'Warning', 'SubsetUnschedulable', `WorkloadSpread subset ${e.markUnschedulable.key} had no feasible node for pod ${pod.name}: skipped for ${seconds}s`);
    }
    if (e.preferencesError) {
      const reported = `${e.preferencesError.workload} ${e.preferencesError.error}`;
      if (!this.reportedPreferences.has(reported)) {
        this.reportedPreferences.set(reported, true);
        this.metrics.invalidPreferences.inc(workloadLabel);
        this.log.warn({ workload: e.preferencesError.workload, error: e.preferencesError.error }, 'invalid zonekeeper.io/zone-preferences; using the defaults');
        if (workload) this.actuator.recordEvent(workload, 'Warning', 'InvalidZonePreferences', `zonekeeper.io/zone-preferences is invalid, every zone weighs 1 instead: ${e.preferencesError.error}`);
      }
    }
    if (e.conflict && !this.conflictsSeen.has(pod.uid)) {
      this.conflictsSeen.set(pod.uid, { pod: `${pod.namespace}/${pod.name}`, workload: key, ...e.conflict, reason: clipReason(e.conflict.reason), at: new Date(now).toISOString() });
      this.metrics.pinVolumeConflicts.inc({ namespace: pod.namespace, workload: workloadLabel.workload });
      this.log.warn({ pod: `${pod.namespace}/${pod.name}`, pinnedZone: e.conflict.pinnedZone, volumeZones: e.conflict.volumeZones }, e.conflict.reason);
      if (workload) this.actuator.recordEvent(workload, 'Warning', 'VolumeOverridesPin', `pod ${pod.name}: ${e.conflict.reason}`);
    }
  }
}
