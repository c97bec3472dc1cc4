import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimStorageClass, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { workloadModel } from './model.js';
import type { PlacementSettings } from './settings.js';
import { claimBound, claimVolumes, volumeZones } from './volumes.js';

// The seat table (docs/design.md#the-policy): what the zone pin of a StatefulSet's ordinal is
// certain to be before the pod exists, published for a MutatingAdmissionPolicy to write into
// each pod inside kube-apiserver. Only what is certain goes in; everything else is left out and
// admission or the gate decides it as before. Pure: the controller writes it.

/**
 * A ConfigMap's data, by key:
 * - `<statefulset uid>` (an Advanced StatefulSet's too): `rr;<topology key>;<ordinals.start>;<zone>,<zone>,…`:
 *   ordinal k goes to `zones[(k - start) mod n]`, unless a key below says otherwise; or
 *   `listed;<topology key>`: only the ordinals listed below are decided.
 * - `<statefulset uid>.<ordinal>`: that ordinal's zone (its bound volume's), or `-`: no entry, the
 *   webhook or the gate decides it.
 * - `table.generation` (GENERATION_KEY, set by the writer): see there.
 */
export type SeatTableData = Record<string, string>;

/**
 * The table's generation: when it was written (ms since the epoch, above the one it replaced),
 * which the policy copies into each pod it decides (label zonekeeper.io/seat-table): how the
 * check tells a pod decided from an old table (docs/design.md#the-policy).
 */
export const GENERATION_KEY = 'table.generation';

/** The value of an ordinal left to the webhook or the gate. */
export const NO_SEAT = '-';

const LABEL_VALUE = /^(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** The kinds whose ordinals the table publishes: a StatefulSet and an Advanced StatefulSet (both numbered as apps/v1 numbers them). */
export const seatedKind = (kind: string): boolean => kind === 'StatefulSet' || kind === 'AdvancedStatefulSet';

/** Why a StatefulSet has no entry, or undefined when its seats are certain from its frozen list. */
export function unpublishable(w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings): string | undefined {
  if (!seatedKind(w.kind)) return 'not a StatefulSet or an Advanced StatefulSet';
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

/**
 * Whether a claim of this class binds where its pod goes: WaitForFirstConsumer without
 * allowedTopologies (with them, the class may keep a seat out of its pin's zone: not certain).
 */
const bindsWherePodGoes = (c: SlimStorageClass | undefined): boolean => !!c && c.waitForFirstConsumer && c.allowedTopologies.length === 0;

/**
 * Why a claim not created yet may be bound away from its seat's pin, or undefined when every
 * claim template's class binds where the pod goes: the template's class, or (none named) the
 * cluster's default, every one of them if several are marked; `""` is static binding.
 */
export function unsureBinding(w: SlimWorkload, snapshot: Snapshot): string | undefined {
  for (const [i, template] of w.claimTemplates.entries()) {
    const name = w.claimTemplateClasses[i];
    if (name === '') return `claim template ${template} names no class (static binding)`;
    const classes = name === undefined ? [...snapshot.storageClasses()].filter((c) => c.isDefault) : [snapshot.storageClass(name)];
    if (classes.length === 0) return `claim template ${template} has no class and the cluster no default StorageClass`;
    if (!classes.every(bindsWherePodGoes)) return `claim template ${template}'s StorageClass ${name ?? '(default)'} is unknown, binds Immediately or has allowedTopologies`;
  }
  return undefined;
}

/** A namespace's claims by `<template>-<workload>`: the ordinals each has claims for (ordinal ≥ 0, written as a controller writes it). */
function claimOrdinals(namespace: string, snapshot: Snapshot): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const name of snapshot.claimNamesIn(namespace)) {
    const m = /^(.+)-(0|[1-9][0-9]{0,8})$/.exec(name);
    if (!m) continue;
    let set = out.get(m[1]!);
    if (!set) out.set(m[1]!, (set = new Set()));
    set.add(Number(m[2]));
  }
  return out;
}

/** The claims of a StatefulSet's ordinal, named as its controller names them. */
const claimsOf = (w: SlimWorkload, ordinal: number): string[] => w.claimTemplates.map((t) => `${t}-${w.name}-${ordinal}`);

/**
 * What the zone pin decides for one ordinal from its claims, as admission reads them when its pod
 * is created: the pin when every volume allows it, else the volumes' one zone, else `-`. A claim
 * not created yet, or Pending, under a class that binds where the pod goes sets no bound.
 */
function ordinalSeat(w: SlimWorkload, ordinal: number, pin: string, topologyKey: string, snapshot: Snapshot, unboundFollowsPod: boolean): string {
  const known: string[] = [];
  for (const claim of claimsOf(w, ordinal)) {
    if (claimBound(w.namespace, claim, snapshot)) {
      known.push(claim);
      continue;
    }
    const pvc = snapshot.pvc(w.namespace, claim);
    if (!unboundFollowsPod || (pvc && !bindsWherePodGoes(pvc.storageClassName ? snapshot.storageClass(pvc.storageClassName) : undefined))) return NO_SEAT;
  }
  const volumes = claimVolumes(w.namespace, known, snapshot);
  if (volumes.missing.length > 0) return NO_SEAT;
  if (volumes.constraints.length === 0) return pin;
  const vz = volumeZones(volumes.constraints, snapshot, topologyKey);
  return vz.has(pin) ? pin : vz.size === 1 ? [...vz][0]! : NO_SEAT;
}

/** One StatefulSet's entries: its list, and the ordinals whose bound volumes decide (or leave undecided) their zone. */
function entriesOf(w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings, claimed: () => Map<string, Set<number>>): SeatTableData {
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings);
  const { zones, topologyKey } = model.zones();
  const out: SeatTableData = {};
  const rr = `rr;${topologyKey};${w.ordinalsStart};${zones.join(',')}`;
  if (w.claimTemplates.length === 0) {
    out[w.uid] = rr;
    return out;
  }
  // Every ordinal the namespace holds a claim for (bounded by the cache, not by replicas: a scale-down keeps its claims).
  const ordinals = new Set<number>();
  for (const t of w.claimTemplates) for (const o of claimed().get(`${t}-${w.name}`) ?? []) if (o >= w.ordinalsStart) ordinals.add(o);
  const pinOf = (ordinal: number) => zones[(ordinal - w.ordinalsStart) % zones.length]!;
  if (unsureBinding(w, snapshot) === undefined) {
    // Every class binds where the pod goes: the pin is certain for an ordinal with no bound claim;
    // the others are exceptions (the volume's zone, or `-`).
    out[w.uid] = rr;
    for (const ordinal of [...ordinals].sort((a, b) => a - b)) {
      const zone = ordinalSeat(w, ordinal, pinOf(ordinal), topologyKey, snapshot, true);
      if (zone !== pinOf(ordinal)) out[`${w.uid}.${ordinal}`] = zone;
    }
    return out;
  }
  // A claim not created or not bound yet may be bound anywhere (Immediate binding): only ordinals whose claims are all bound are listed.
  out[w.uid] = `listed;${topologyKey}`;
  for (const ordinal of ordinals) {
    if (claimsOf(w, ordinal).every((claim) => claimBound(w.namespace, claim, snapshot))) out[`${w.uid}.${ordinal}`] = ordinalSeat(w, ordinal, pinOf(ordinal), topologyKey, snapshot, false);
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
  const sets = [...snapshot.allWorkloads()].filter((w) => w.namespace === namespace && seatedKind(w.kind))
    .sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
  let claims: Map<string, Set<number>> | undefined;
  const claimed = () => (claims ??= claimOrdinals(namespace, snapshot));
  const data: SeatTableData = {};
  const overflow: string[] = [];
  let bytes = 0;
  for (const w of sets) {
    if (unpublishable(w, snapshot, settings) !== undefined) continue;
    const entries = entriesOf(w, snapshot, settings, claimed);
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
