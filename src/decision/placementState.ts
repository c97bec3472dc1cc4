import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { Actuator } from '../actuator/actuator.js';
import type { Clock } from '../common/clock.js';
import { ExpiringMap } from '../common/expiringMap.js';
import type { PendingPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Config } from '../common/config.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PendingFreezes } from '../placement/fleet.js';
import { clipReason, type Candidates, type DecisionState, type PlacementInput } from '../placement/policy.js';
import type { PlacementSettings } from '../placement/settings.js';
import type { FilterVerdict } from '../placement/verdict.js';
import type { GateFallback } from './spec.js';
import { Reservations } from './reservationLedger.js';

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
export class PlacementState implements DecisionState {
  readonly settings: PlacementSettings;
  readonly reservations: Reservations;
  private readonly waitingSince: ExpiringMap<string, number>;
  private readonly unschedulable: LRUCache<string, number>;
  /** Zones a gated pod of a seat was not scheduled in (adaptive fallback with the gate), by failedPinKey. */
  private readonly failedPinZones: ExpiringMap<string, Set<string>>;
  private readonly conflictsSeen = new LRUCache<string, PinConflict>({ max: 10_000 });
  private readonly reportedPreferences = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    config: Config, private readonly source: SnapshotSource, private readonly actuator: Actuator,
    private readonly metrics: Metrics, private readonly log: Logger, private readonly clock: Clock,
  ) {
    this.settings = { ...config.placement, podsBeyondSubsets: config.workloadSpread.podsBeyondSubsets };
    this.reservations = new Reservations(config.placement.reservationTtlSeconds, clock);
    this.waitingSince = new ExpiringMap({ max: 100_000, ttlMs: 3_600_000, clock });
    // Keyed by a tenant's subset names: bounded in bytes too.
    this.unschedulable = new LRUCache({
      max: 10_000, maxSize: 8 * 1024 * 1024, sizeCalculation: (_, key) => 2 * key.length + 64,
      ttl: config.placement.adaptiveUnschedulableSeconds * 1000, perf: clock,
    });
    this.failedPinZones = new ExpiringMap({ max: 10_000, ttlMs: config.placement.adaptiveUnschedulableSeconds * 1000, clock });
    // A reservation ends when the watch shows the pod bound or gone (docs/design.md#reservations).
    source.store.onPod((type, pod) => {
      if (type === 'delete' || pod.nodeName) this.reservations.release(pod.uid);
      else this.reservations.releaseAdmitted(pod.namespace, pod.name);
      if (type === 'delete') this.waitingSince.delete(pod.uid);
    });
  }

  get pendingFreezes(): PendingFreezes {
    return this.actuator.pendingFreezes;
  }

  get unschedulableSubsets(): { get(subsetKey: string): number | undefined } {
    return this.unschedulable;
  }

  get failedPins(): { get(key: string): ReadonlySet<string> | undefined } {
    return this.failedPinZones;
  }

  /**
   * A gated pod was deleted for not being scheduled in time (docs/design.md#the-zone-gate): the
   * seat's next pod skips its zone, or the workload's next pods its subset, for
   * adaptiveUnschedulableSeconds.
   */
  gateFallback(fb: GateFallback): void {
    if (fb.kind === 'subset') {
      const until = this.clock.now() + this.settings.adaptiveUnschedulableSeconds * 1000;
      this.unschedulable.set(fb.key, until);
      return;
    }
    const zones = new Set(this.failedPinZones.get(fb.key));
    zones.add(fb.given);
    this.failedPinZones.set(fb.key, zones);
  }

  conflicts(): PinConflict[] {
    return [...this.conflictsSeen.values()];
  }

  /** The data one filter or prioritize call is decided on, read now: build it after any await. */
  inputOf(pod: PendingPod, candidates: Candidates, writesSpec = false): PlacementInput {
    return {
      pod, candidates, snapshot: this.source.snapshot, reservations: this.reservations, settings: this.settings, now: this.clock.now(),
      writesSpec,
      waitingSince: this.waitingSince.get(pod.uid),
      pendingFreezes: this.actuator.pendingFreezes,
      unschedulableSubsets: this.unschedulable,
      failedPins: this.failedPinZones,
    };
  }

  /** Carries out a filter verdict's effects: the only writer of this state and of zone freezes. */
  apply(input: PlacementInput, v: FilterVerdict): void {
    if (!v.managed || !v.model) return;
    const { pod, now } = input;
    const { key, ref } = v.model;
    const workloadLabel = { namespace: ref.namespace, workload: `${ref.kind}/${ref.name}` };
    if (v.passed.length > 0) this.waitingSince.delete(pod.uid);
    else if (!this.waitingSince.has(pod.uid)) this.waitingSince.set(pod.uid, now);
    const e = v.effects;
    if (e.reserve) this.reservations.reserve({ uid: pod.uid, pod: `${pod.namespace}/${pod.name}`, workload: key, zone: e.reserve.zone, subset: e.reserve.subset, at: now });
    if (e.freeze) this.actuator.freezeZones(e.freeze.workload, e.freeze.zones, e.freeze.adopted);
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
