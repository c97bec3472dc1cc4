import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { workloadModel } from './model.js';
import type { PlacementSettings } from './settings.js';
import { claimVolumes, volumeZones } from './volumes.js';
import { seatZone } from './zoneSequence.js';

// The seat table (docs/design.md#the-policy): what the zone pin of a StatefulSet's ordinal is
// certain to be before the pod exists, published for a MutatingAdmissionPolicy to write into
// each pod inside kube-apiserver. Only what is certain goes in; everything else is left out and
// admission or the gate decides it as before. Pure: the controller writes it.

/**
 * A ConfigMap's data, by key:
 * - `<statefulset uid>`: `rr;<topology key>;<ordinals.start>;<zone>,<zone>,…`: ordinal k goes to
 *   `zones[(k - start) mod n]`, unless a key below says otherwise; or `listed;<topology key>`:
 *   only the ordinals listed below are decided.
 * - `<statefulset uid>.<ordinal>`: that ordinal's zone (its bound volume's), or `-`: no entry, the
 *   webhook or the gate decides it.
 */
export type SeatTableData = Record<string, string>;

/** Ordinals past `replicas` whose bound claims are published too, for a scale-up within them. */
const SCALE_UP_SEATS = 100;

/** The value of an ordinal left to the webhook or the gate. */
export const NO_SEAT = '-';

const LABEL_VALUE = /^(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Why a StatefulSet has no entry, or undefined when its seats are certain from its frozen list. */
export function unpublishable(w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings): string | undefined {
  if (w.kind !== 'StatefulSet') return 'not a StatefulSet';
  if (!w.uid) return 'no UID';
  if (settings.zoneFallback !== 'strict') return 'zoneFallback is adaptive: a seat may fall through to another zone';
  if (w.zonePreferences !== undefined) return 'zone preferences: the sequence is not plain round-robin';
  if (w.templateClaims) return 'its pod template mounts a claim of its own: its volume may decide the zone';
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings);
  if (model.policy !== 'zone-pin' || model.seats !== 'ordinal') return `placed by ${model.policy}, not by a zone pin of its ordinals`;
  if (w.annotations[ANNOTATION.ignore] === 'true') return 'opted out';
  const list = model.zones();
  if (list.source !== 'annotation' || list.zones.length === 0) return 'its zone list is not frozen yet';
  // The policy writes them into a nodeSelector as they are: a list the API would refuse there stays with the webhook.
  if (!list.zones.every((z) => LABEL_VALUE.test(z)) || !LABEL_KEY.test(list.topologyKey)) return 'its zone list or topology key is not a valid label';
  return undefined;
}

/** One StatefulSet's entries: its list, and the ordinals whose bound volumes decide (or leave undecided) their zone. */
function entriesOf(w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings): SeatTableData {
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings);
  const { zones, topologyKey } = model.zones();
  const out: SeatTableData = {};
  if (w.claimTemplates.length === 0) {
    out[w.uid] = `rr;${topologyKey};${w.ordinalsStart};${zones.join(',')}`;
    return out;
  }
  // A claim not created or not bound yet may be bound anywhere (Immediate binding): only ordinals whose claims are all bound are listed.
  out[w.uid] = `listed;${topologyKey}`;
  // The live seats and a scale-up's (claims a scale-down kept, volumes restored ahead), each with a bound PV:
  // no more seats are looked at than the cache holds PVs.
  const seats = Math.min(w.replicas + SCALE_UP_SEATS, snapshot.pvCount());
  for (let index = 0; index < seats; index++) {
    const ordinal = w.ordinalsStart + index;
    const claims = w.claimTemplates.map((t) => `${t}-${w.name}-${ordinal}`);
    const volumes = claimVolumes(w.namespace, claims, snapshot);
    if (volumes.missing.length > 0 || volumes.constraints.length < claims.length || volumes.constraints.some((c) => !c.bound)) continue;
    const pin = seatZone(zones, index).zone;
    const vz = volumeZones(volumes.constraints, snapshot, topologyKey);
    // As the zone pin decides: the pin when a volume allows it, else the volume's one zone; several zones: no single answer.
    const zone = pin !== undefined && vz.has(pin) ? pin : vz.size === 1 ? [...vz][0]! : NO_SEAT;
    out[`${w.uid}.${ordinal}`] = zone;
  }
  return out;
}

export interface SeatTable {
  data: SeatTableData;
  /** StatefulSets left out because the table was full: the webhook decides their pods. */
  overflow: string[];
}

/**
 * The seat table of a namespace: every StatefulSet whose seats are certain, in name order, while
 * the data stays within `maxBytes` (what does not fit is left out whole, and named).
 */
export function seatTable(namespace: string, snapshot: Snapshot, settings: PlacementSettings, maxBytes: number): SeatTable {
  const sets = [...snapshot.allWorkloads()].filter((w) => w.namespace === namespace && w.kind === 'StatefulSet').sort((a, b) => a.name.localeCompare(b.name));
  const data: SeatTableData = {};
  const overflow: string[] = [];
  let bytes = 0;
  for (const w of sets) {
    if (unpublishable(w, snapshot, settings) !== undefined) continue;
    const entries = entriesOf(w, snapshot, settings);
    const size = Object.entries(entries).reduce((n, [k, v]) => n + k.length + v.length + 8, 0);
    if (bytes + size > maxBytes) {
      overflow.push(w.name);
      continue;
    }
    bytes += size;
    Object.assign(data, entries);
  }
  return { data, overflow };
}
