import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { WorkloadHealth } from './healthRecord.js';
import type { WorkloadModel } from './model.js';
import { fitInZone } from './policies/zoneBalance/policy.js';

// Repair (docs/design.md#repair): which pod of a workload to move next, or why none may move
// now. Only the choice; the Lease's holder evicts, and the filter puts the replacement on its seat.

/** Whether the workload asked for repair: `rebalance: true` in its preferences or the annotation. */
export function rebalanceRequested(w: SlimWorkload): boolean {
  return w.annotations[ANNOTATION.rebalance] === 'true' || (w.zonePreferences?.ok === true && w.zonePreferences.spec.rebalance === true);
}

export type RepairStep =
  | { kind: 'evict'; pod: SlimPod; from: string | undefined; to: string | undefined; why: string }
  | { kind: 'wait'; reason: string }
  | { kind: 'none' };

export interface RepairInputs {
  now: number;
  zoneStableSeconds: number;
  /** Schedulable (Ready, uncordoned) nodes of a zone, and since when that count has been above or at zero. */
  zones: { schedulableNodes(topologyKey: string, zone: string): number; stableSince(topologyKey: string, zone: string): number };
  /** The pod this workload's last eviction removed, while its replacement is not settled. */
  evicted: { uid: string; name: string } | undefined;
}

/**
 * The next pod to move: one off its pin (or over its zone's share) that no bound volume holds,
 * whose target zone has room, while every wanted zone has a schedulable node that has stayed
 * so for `zoneStableSeconds`, and the last eviction's replacement is bound and Ready.
 */
export function repairStep(model: WorkloadModel, w: SlimWorkload, health: WorkloadHealth, snapshot: Snapshot, o: RepairInputs): RepairStep {
  if (health.offPin === 0) return { kind: 'none' };
  const pods = model.pods();
  if (o.evicted) {
    if (pods.some((p) => p.uid === o.evicted!.uid)) return { kind: 'wait', reason: `pod ${o.evicted.name} was evicted and is still there` };
    const notReady = pods.filter((p) => !p.nodeName || !p.ready);
    if (notReady.length > 0 || pods.length < w.replicas) {
      return { kind: 'wait', reason: `the replacement of ${o.evicted.name} is not bound and Ready yet (${notReady.length} pods not Ready, ${pods.length} of ${w.replicas})` };
    }
  }
  const movable = health.offPinPods.filter((x) => !x.heldByVolume && x.cause !== 'volume');
  if (movable.length === 0) return { kind: 'wait', reason: 'every pod off its pin is held there by its bound volume: reported, never moved' };
  const { topologyKey } = model.zones();
  // A zone no node of which fits the pods is never waited for, nor moved towards.
  const wanted = Object.keys(health.perZone).filter((z) => health.perZone[z]!.want > 0 && !health.unusableZones.includes(z));
  for (const z of wanted) {
    if (o.zones.schedulableNodes(topologyKey, z) === 0) return { kind: 'wait', reason: `zone ${z} has no schedulable node` };
    const stable = (o.now - o.zones.stableSince(topologyKey, z)) / 1000;
    if (stable < o.zoneStableSeconds) return { kind: 'wait', reason: `zone ${z} changed ${Math.floor(stable)}s ago: waiting until it has been stable for ${o.zoneStableSeconds}s` };
  }
  const short = wanted.filter((z) => health.perZone[z]!.pods < health.perZone[z]!.want);
  for (const candidate of movable) {
    const pod = pods.find((p) => p.name === candidate.pod);
    if (!pod) continue;
    // Pins go to their seat's zone; zone balance to a zone under its share (the filter picks which).
    // Room is judged for the replacement, made from the template: the zone a decision wrote into this pod's spec does not follow it.
    const targets = candidate.pinnedZone !== undefined ? [candidate.pinnedZone] : short;
    const replacement = { ...pod, selection: w.template.selection, tolerations: w.template.tolerations };
    const to = targets.find((z) => fitInZone(z, topologyKey, replacement, snapshot) > 0);
    if (to === undefined) continue;
    const why = candidate.pinnedZone !== undefined
      ? `its seat is in ${candidate.pinnedZone}, it runs in ${candidate.zone ?? 'no zone'} (${candidate.cause})`
      : `${candidate.zone ?? 'its zone'} holds more than its share, ${to} fewer (${candidate.cause})`;
    return { kind: 'evict', pod, from: candidate.zone, to, why };
  }
  return { kind: 'wait', reason: `no target zone has room for the ${movable.length} pod(s) off their pin` };
}
