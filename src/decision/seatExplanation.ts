import { ANNOTATION } from '../cluster/annotations.js';
import { workloadKindSpec } from '../cluster/kinds.js';
import { zoneOf, type SlimPod, type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { adoptedList, placedSeats } from '../placement/zoneListAdoption.js';
import { podOffPinCause } from '../placement/health.js';
import type { OffPinCause } from '../placement/healthRecord.js';
import type { WorkloadModel } from '../placement/model.js';
import { rebalanceRequested } from '../placement/repairChoice.js';
import type { PlacementSettings } from '../placement/settings.js';
import { podVolumes, volumeZones } from '../placement/volumes.js';
import type { WorkloadRef } from '../placement/workload.js';
import type { ZoneListSource } from '../placement/zones.js';
import { seatZones } from '../placement/zoneSequence.js';

// /debug/explain's account of a pod against its seat, in words a user acts on: where the pod
// is, where its seat is, why the two differ, and what would bring them together, with the
// exact command (docs/operations.md#endpoints).

type FixBy = 'repair' | 'delete-pod' | 'zone-list' | 'move-data';

export interface SeatExplanation {
  /** Where the pod is: its node ('' when not bound) and that node's zone. */
  location: { node: string; zone: string | undefined };
  /** Its seat ("ordinal 1", its index) and the zone the list gives it; absent when its workload has no seats. */
  seat?: { label: string; index: number; zone: string | undefined; list: string[]; listSource: ZoneListSource };
  /** Set when the pod is bound outside its seat's zone: the cause health counts, in words (a pending pod's volume: in `explanation`). */
  offSeat?: { cause: OffPinCause; why: string; heldByVolume: boolean };
  /** What would bring pod and seat together, each with the command that does it. */
  fixes: { by: FixBy; what: string; command: string }[];
  /** All of the above as sentences: what a browser shows first. */
  explanation: string[];
}

/** What the explanation depends on beyond the cluster: repair's switch, and whether anything binds pods (a file: nothing). */
export interface ExplainContext { rebalanceEnabled: boolean; fromFile: boolean }

/** Why a pending pod of a file stays pending: said once, wherever the explanation ends. */
/** rebalance.enabled through the chart (docs/operations.md: the chart's `config`). */
const REPAIR_ON = 'helm upgrade zonekeeper charts/zonekeeper -n zonekeeper-system --reuse-values --set config.rebalance.enabled=true';

const NOTHING_BINDS = 'Nothing binds pods here: this is a file (the demo, a --snapshot), with no kube-scheduler, so it stays pending; in a cluster, kube-scheduler binds it where the dry run sends it.';

/** `kubectl -n NS VERB RESOURCE NAME`: the resource with its group where apps/v1 is not meant (an Advanced StatefulSet). */
function kubectl(verb: string, ref: WorkloadRef, rest: string): string {
  const spec = workloadKindSpec(ref.kind);
  const resource = !spec ? ref.kind.toLowerCase() : spec.group === 'apps' ? spec.resource : `${spec.resource}.${spec.group}`;
  return `kubectl -n ${ref.namespace} ${verb} ${resource} ${ref.name} ${rest}`;
}

const LIST_WORDS: Record<ZoneListSource, string> = {
  annotation: 'frozen in zonekeeper.io/zones',
  'pending-freeze': 'being frozen into zonekeeper.io/zones',
  nodes: 'derived from the nodes, not frozen yet',
};

/** The cause in words, with the cause's name last (health counts it by that name). */
function causeWords(
  cause: OffPinCause, pod: SlimPod, w: SlimWorkload, volumeZone: string | undefined, settings: PlacementSettings, listSource: ZoneListSource,
): string {
  const what = `${w.kind} ${w.namespace}/${w.name}`;
  switch (cause) {
    case 'volume': return `its bound volume is in ${volumeZone ?? 'another zone'}: a bound volume's zone wins over the pin, and data does not move (volume)`;
    case 'placed-before': return listSource === 'nodes'
      ? `it was placed before zonekeeper placed any pod of ${what}: no zone list was frozen yet, so no pin held it (placed-before)`
      : `it was created before zonekeeper froze the zone list (zonekeeper.io/zones-frozen-at ${w.annotations[ANNOTATION.zonesFrozenAt]}): another scheduler placed it (placed-before)`;
    case 'fallback': return `placement.zoneFallback: adaptive let it fall through to another zone after its seat's zone had no room for ${settings.fallbackAfterSeconds} s (fallback)`;
    default: return `zonekeeper did not place it there: created ${pod.createdAt ? new Date(pod.createdAt).toISOString() : 'at an unknown time'}, after the list was frozen, with no volume or fallback to explain it; another scheduler may have bound it, or its node's zone label changed (unknown)`;
  }
}

/** The zone list that keeps the most placed seats in their zone, when it also puts this pod's seat where the pod is. */
function listFix(model: WorkloadModel, pod: SlimPod, index: number, zone: string, snapshot: Snapshot, w: SlimWorkload): SeatExplanation['fixes'][number] | undefined {
  const list = model.zones();
  if (model.preferences.parsed !== undefined) return undefined;
  const placed = placedSeats(model.seats === 'ordinal' ? w : undefined, model.pods(), (p) => model.seat(p).index, snapshot, list.topologyKey);
  const best = adoptedList(list.zones, placed);
  if (best.zones[index % best.zones.length] !== zone) return undefined;
  const pinOf = seatZones(list.zones);
  const now = placed.filter((s) => pinOf(s.index).zone === s.zone).length;
  return {
    by: 'zone-list',
    what: `Set the zone list to ${best.zones.join(',')}: its seat is then in ${zone}, where ${pod.name} is, and ${best.agree} of ${placed.length} placed seats are in their zone (${now} with the list now); every seat follows the new order`,
    command: kubectl('annotate', model.ref, `${ANNOTATION.zones}=${best.zones.join(',')} --overwrite`),
  };
}

/** Where a pending pod's dry-run filter sends it: the one zone of the nodes it passed, if one, and a sentence. */
function destination(decision: { passed: readonly string[]; summary: string }, snapshot: Snapshot, topologyKey: string): { zone?: string; sentence: string } {
  const zones = new Set<string | undefined>();
  for (const n of decision.passed) {
    const node = snapshot.node(n);
    zones.add(node && zoneOf(node, topologyKey));
  }
  const zone = zones.size === 1 ? [...zones][0] : undefined;
  const where = decision.passed.length === 0 ? 'no node now' : zone ?? `${decision.passed.length} nodes`;
  return { zone, sentence: `Its dry-run filter sends it to ${where}: ${decision.summary}.` };
}

/**
 * Where the pod is against its seat, and what would fix a difference; `model`: the one its
 * dry-run filter was decided on, `decision`: what that filter passed and why.
 */
export function explainSeat(pod: SlimPod, model: WorkloadModel | undefined, snapshot: Snapshot, settings: PlacementSettings,
  decision: { passed: readonly string[]; summary: string }, context: ExplainContext = { rebalanceEnabled: true, fromFile: false }): SeatExplanation {
  const e = seatAndFixes(pod, model, snapshot, settings, decision, context);
  return !pod.nodeName && context.fromFile ? { ...e, explanation: [...e.explanation, NOTHING_BINDS] } : e;
}

function seatAndFixes(pod: SlimPod, model: WorkloadModel | undefined, snapshot: Snapshot, settings: PlacementSettings,
  decision: { passed: readonly string[]; summary: string }, context: ExplainContext): SeatExplanation {
  const list = model && model.policy !== 'none' && model.policy !== 'wait' ? model.zones() : undefined;
  const topologyKey = list?.topologyKey ?? settings.topologyKey;
  const node = pod.nodeName ? snapshot.node(pod.nodeName) : undefined;
  const location = { node: pod.nodeName, zone: node && zoneOf(node, topologyKey) };
  const name = `${pod.namespace}/${pod.name}`;
  const sentences = [pod.nodeName
    ? `${name} is in ${location.zone ?? 'no zone (its node has no zone label)'}, on node ${pod.nodeName}.`
    : `${name} is not bound to a node yet.`];
  const w = model?.workload;
  const index = model && model.seats !== 'none' ? model.seat(pod) : undefined;
  if (!model || !list || !w || !index || index.index < 0) {
    sentences.push(model && model.policy === 'none' ? `zonekeeper does not place it: ${model.why}.` : 'It holds no seat: its workload\'s zone balance or WorkloadSpread decides its zone.');
    if (!pod.nodeName && model?.policy !== 'none') sentences.push(destination(decision, snapshot, topologyKey).sentence);
    return { location, fixes: [], explanation: sentences };
  }
  const seatZone = seatZones(list.zones, model.preferences.sequence)(index.index).zone;
  const seat = { label: index.label, index: index.index, zone: seatZone, list: list.zones, listSource: list.source };
  sentences.push(`Its seat, ${index.label} of ${w.kind} ${w.namespace}/${w.name}, is in ${seatZone ?? 'no zone'} (zone list ${list.zones.join(',')}, ${LIST_WORDS[list.source]}).`);
  const going = pod.nodeName ? undefined : destination(decision, snapshot, topologyKey);
  if (going) sentences.push(going.sentence);
  // Where it is, or (pending) the one zone it is going to: a pending pod differs from its seat only where its volume sends it.
  const here = pod.nodeName ? location.zone : going?.zone;
  const bound = podVolumes(pod, snapshot).constraints.filter((c) => c.bound);
  const volumeAt = bound.length > 0 ? volumeZones(bound, snapshot, list.topologyKey) : undefined;
  const heldByVolume = here !== undefined && volumeAt !== undefined && volumeAt.has(here);
  if (here === undefined || here === seatZone || (!pod.nodeName && !heldByVolume)) {
    if (pod.nodeName) sentences.push(here === seatZone ? 'It is on its seat: nothing to fix.' : 'Its zone cannot be read.');
    return { location, seat, fixes: [], explanation: sentences };
  }
  const cause = podOffPinCause(pod, seatZone, w, snapshot, list, settings);
  const why = causeWords(cause, pod, w, volumeAt && [...volumeAt].join(', '), settings, list.source);
  sentences.push(`They ${pod.nodeName ? 'differ' : 'will differ'} because ${why}.`);
  const fixes: SeatExplanation['fixes'] = [];
  if (heldByVolume) {
    const claims = bound.map((c) => c.claim);
    fixes.push({
      by: 'move-data',
      what: `zonekeeper never moves it and repair skips it: ${pod.nodeName ? 'a new pod would come back' : 'it goes'} to ${here}. Only moving its data puts it on its seat: if the application rebuilds the replica from the others, delete its claim and the pod: the ${w.kind} makes both again, and the new pod goes to ${seatZone} (its new volume too, where its StorageClass binds WaitForFirstConsumer; the data on ${claims.join(', ')} is lost)`,
      command: `kubectl -n ${pod.namespace} delete pvc ${claims.join(' ')} --wait=false && kubectl -n ${pod.namespace} delete pod ${pod.name}`,
    });
  } else {
    const optedIn = rebalanceRequested(w);
    const optIn = kubectl('annotate', model.ref, `${ANNOTATION.rebalance}=true`);
    const turnOn = context.rebalanceEnabled ? '' : `Repair is off in this zonekeeper: turn it on (rebalance: {enabled: true} in zonekeeper.yaml; with the chart: ${REPAIR_ON}), then `;
    fixes.push({
      by: 'repair',
      what: `${turnOn}${optedIn ? `${w.kind} ${w.name} is opted into repair` : `${turnOn ? 'opt' : 'Opt'} ${w.kind} ${w.name} into repair`}: the Lease holder then evicts the pod through the Eviction API (its PodDisruptionBudget decides) once every zone has been stable for rebalance.zoneStableSeconds, and the new pod lands on its seat`,
      command: [...(context.rebalanceEnabled ? [] : [REPAIR_ON]), ...(optedIn ? [] : [optIn])].join(' && ') || `kubectl -n ${pod.namespace} get events --field-selector involvedObject.name=${w.name}`,
    });
    fixes.push({
      by: 'delete-pod',
      what: `Or delete the pod now: the ${w.kind} makes it again and zonekeeper pins it to ${seatZone}`,
      command: `kubectl -n ${pod.namespace} delete pod ${pod.name}`,
    });
  }
  const zoneList = listFix(model, pod, index.index, here, snapshot, w);
  if (zoneList) fixes.push(zoneList);
  else if (model.preferences.parsed === undefined) sentences.push(`No zone list puts its seat in ${here} without moving more seats out of theirs.`);
  sentences.push(...fixes.map((f) => `${f.what}: ${f.command}`));
  return { location, seat, ...(pod.nodeName ? { offSeat: { cause, why, heldByVolume } } : {}), fixes, explanation: sentences };
}
