import { ANNOTATION } from '../cluster/annotations.js';
import { zoneOf, type PendingPod, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import type { WorkloadHealth } from './healthRecord.js';
import type { WorkloadModel } from './model.js';
import { podAvailable } from './zoneDisruption.js';
import { workloadLivePods } from './workload.js';
import { subsetMembership } from './policies/workloadSpread/subsets.js';
import { fitInZone, fitOnNodes } from './policies/zoneBalance/zoneBalancePolicy.js';

// Repair (docs/design.md#repair): which pod of a workload to move next, or why none may move
// now. Only the choice; the Lease's holder evicts, and the filter puts the replacement on its seat.

/** Whether the workload asked for repair: `rebalance: true` in its preferences or the annotation. */
export function rebalanceRequested(w: SlimWorkload): boolean {
  return w.annotations[ANNOTATION.rebalance] === 'true' || (w.zonePreferences?.ok === true && w.zonePreferences.spec.rebalance === true);
}

export type RepairStep =
  /** `from`, `to`: zones, or a WorkloadSpread's subsets; `stableFor`: seconds each wanted one has been stable. */
  | { kind: 'evict'; pod: SlimPod; from: string | undefined; to: string | undefined; why: string; stableFor: Record<string, number> }
  | { kind: 'wait'; reason: string }
  | { kind: 'none' };

export interface RepairInputs {
  now: number;
  zoneStableSeconds: number;
  /** Schedulable (Ready, uncordoned) nodes of a zone, and since when that count has been above or at zero. */
  zones: { schedulableNodes(topologyKey: string, zone: string): number; stableSince(topologyKey: string, zone: string): number };
  /** The pod this holder's last eviction of the workload removed: waited for until the watch shows it go. */
  evicted: { uid: string; name: string } | undefined;
}

/** Where health counts a workload's pods, as repair judges it: a zone, or a WorkloadSpread subset. */
interface Place {
  schedulableNodes: number;
  /** Since when (ms) its nodes' zones have each had, or lacked, a schedulable node. */
  stableSince: number;
  /** No node of the cluster is in it at all: never waited for, nor moved towards (a zone no node fits). */
  unusable: boolean;
  /** How many more pods like `replacement` fit there now. */
  room(replacement: PendingPod): number;
}

const schedulable = (n: { ready: boolean; unschedulable: boolean }) => n.ready && !n.unschedulable;

/**
 * Health's places for this workload: its zones, or a WorkloadSpread's subsets, each judged by the
 * subset's own nodes (its required term and tolerations), never by its name: a subset named
 * subset-a, ecs or elastic is as stable as every zone its nodes lie in.
 */
function placesOf(model: WorkloadModel, w: SlimWorkload, health: WorkloadHealth, snapshot: Snapshot, o: RepairInputs): (name: string) => Place | undefined {
  const { topologyKey } = model.zones();
  if (health.domain === 'zone') {
    return (zone) => ({
      schedulableNodes: o.zones.schedulableNodes(topologyKey, zone), stableSince: o.zones.stableSince(topologyKey, zone),
      unusable: health.unusableZones.includes(zone), room: (pod) => fitInZone(zone, topologyKey, pod, snapshot),
    });
  }
  if (model.policy !== 'workloadspread') return () => undefined;
  return (name) => {
    const subset = model.ws.subsets.find((s) => s.name === name);
    if (!subset) return undefined;
    const inSubset = subsetMembership(subset, w.template.tolerations);
    const nodes = [...snapshot.nodes()].filter(inSubset);
    let stableSince = -Infinity;
    for (const z of new Set(nodes.map((n) => zoneOf(n, topologyKey)))) {
      if (z !== undefined) stableSince = Math.max(stableSince, o.zones.stableSince(topologyKey, z));
    }
    return {
      schedulableNodes: nodes.filter(schedulable).length, stableSince, unusable: nodes.length === 0,
      room: (pod) => fitOnNodes(nodes, { ...pod, tolerations: [...pod.tolerations, ...subset.tolerations] }, snapshot),
    };
  };
}

/** The first pod of the workload not available (Pending, terminating, not Ready, on a node not Ready), or replicas with no pod; undefined when none. */
function notAvailable(model: WorkloadModel, w: SlimWorkload, snapshot: Snapshot): string | undefined {
  const live = workloadLivePods(model.ref, snapshot);
  const down = live.find((p) => !podAvailable(p, snapshot));
  if (down) return `pod ${down.name} is ${down.terminating ? 'terminating' : !down.nodeName ? 'Pending' : !down.ready ? 'not Ready' : `on node ${down.nodeName}, which is not Ready`}`;
  const seated = live.filter((p) => !p.terminating).length;
  return seated < w.replicas ? `${w.replicas - seated} of ${w.replicas} replicas have no pod` : undefined;
}

/**
 * The next pod to move: one off its pin (or over its zone's share) that no bound volume holds,
 * whose target zone has room, while every wanted zone has a schedulable node that has stayed
 * so for `zoneStableSeconds`, and every pod of the workload is available (the last eviction's
 * replacement too, whoever made it). For a
 * WorkloadSpread, its subsets in place of zones, each judged by its own nodes.
 */
export function repairStep(model: WorkloadModel, w: SlimWorkload, health: WorkloadHealth, snapshot: Snapshot, o: RepairInputs): RepairStep {
  if (health.offPin === 0) return { kind: 'none' };
  const pods = model.pods();
  if (o.evicted && pods.some((p) => p.uid === o.evicted!.uid)) return { kind: 'wait', reason: `pod ${o.evicted.name} was evicted and is still there` };
  // One at a time, read from the cluster (a new Lease holder remembers no eviction): any pod of the workload down waits.
  const down = notAvailable(model, w, snapshot);
  if (down) return { kind: 'wait', reason: `${down}: repair moves a pod only while every pod of the workload is available` };
  const movable = health.offPinPods.filter((x) => !x.heldByVolume && x.cause !== 'volume');
  if (movable.length === 0) return { kind: 'wait', reason: 'every pod off its pin is held there by its bound volume: reported, never moved' };
  const unit = health.domain;
  const placeOf = placesOf(model, w, health, snapshot, o);
  const places = new Map<string, Place>();
  for (const name of Object.keys(health.perZone)) {
    const place = placeOf(name);
    if (place) places.set(name, place);
  }
  // A zone (subset) no node of which fits the pods is never waited for, nor moved towards.
  const wanted = [...places.keys()].filter((z) => health.perZone[z]!.want > 0 && !places.get(z)!.unusable);
  const stableFor: Record<string, number> = {};
  for (const z of wanted) {
    const place = places.get(z)!;
    if (place.schedulableNodes === 0) return { kind: 'wait', reason: `${unit} ${z} has no schedulable node` };
    const stable = (o.now - place.stableSince) / 1000;
    if (stable < o.zoneStableSeconds) return { kind: 'wait', reason: `${unit} ${z} changed ${Math.floor(stable)}s ago: waiting until it has been stable for ${o.zoneStableSeconds}s` };
    stableFor[z] = Number.isFinite(stable) ? Math.round(stable) : -1;
  }
  const short = wanted.filter((z) => health.perZone[z]!.pods < health.perZone[z]!.want);
  for (const candidate of movable) {
    const pod = pods.find((p) => p.name === candidate.pod);
    if (!pod) continue;
    // Pins go to their seat's zone; zone balance to a zone under its share (the filter picks which).
    // Room is judged for the replacement, made from the template: the zone a decision wrote into this pod's spec does not follow it.
    const targets = candidate.pinnedZone !== undefined ? [candidate.pinnedZone] : short;
    const replacement = { ...pod, selection: w.template.selection, tolerations: w.template.tolerations };
    const to = targets.find((z) => ((places.get(z) ?? placeOf(z))?.room(replacement) ?? 0) > 0);
    if (to === undefined) continue;
    const why = candidate.pinnedZone !== undefined
      ? `its seat is in ${candidate.pinnedZone}, it runs in ${candidate.zone ?? 'no zone'} (${candidate.cause})`
      : `${candidate.zone ?? `its ${unit}`} holds more than its share, ${to} fewer (${candidate.cause})`;
    return { kind: 'evict', pod, from: candidate.zone, to, why, stableFor };
  }
  return { kind: 'wait', reason: `no target ${unit} has room for the ${movable.length} pod(s) off their pin` };
}
