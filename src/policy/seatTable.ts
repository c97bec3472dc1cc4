import { ANNOTATION } from '../cluster/annotations.js';
import type { SlimStorageClass, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { workloadModel } from '../placement/model.js';
import type { PlacementSettings } from '../placement/settings.js';
import { claimBound } from '../placement/volumes.js';

// The seat table (docs/design.md#the-policy): the zone admission would write for a StatefulSet's
// ordinal, asked of the decision service before the pod exists and published for a
// MutatingAdmissionPolicy to write into each pod inside kube-apiserver. Only what is certain goes
// in; everything else is left out and admission or the gate decides it as before.

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
 * The zone the decision service's admission would write for a StatefulSet's ordinal whose pod
 * mounts `claims`, or undefined where it would write none (DecisionService.seatOf).
 */
export type SeatOf = (w: SlimWorkload, ordinal: number, claims: readonly string[]) => string | undefined;

/**
 * One StatefulSet's entries, every one asked of the decision service: its list (the seats of one
 * turn of it), and the ordinals whose claims exist, where a volume may decide; undefined when a
 * seat of the turn has no certain zone.
 */
function entriesOf(
  w: SlimWorkload, snapshot: Snapshot, settings: PlacementSettings, claimed: () => Map<string, Set<number>>, seatOf: SeatOf,
): SeatTableData | undefined {
  const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings);
  const { zones, topologyKey } = model.zones();
  const turn = zones.map((_, k) => seatOf(w, w.ordinalsStart + k, []));
  if (turn.some((z) => z === undefined)) return undefined;
  const out: SeatTableData = {};
  const rr = `rr;${topologyKey};${w.ordinalsStart};${turn.join(',')}`;
  if (w.claimTemplates.length === 0) {
    out[w.uid] = rr;
    return out;
  }
  // Every ordinal the namespace holds a claim for (bounded by the cache, not by replicas: a scale-down keeps its claims).
  const ordinals = new Set<number>();
  for (const t of w.claimTemplates) for (const o of claimed().get(`${t}-${w.name}`) ?? []) if (o >= w.ordinalsStart) ordinals.add(o);
  const exists = (claim: string) => snapshot.pvc(w.namespace, claim) !== undefined;
  // A claim admission reads a zone from: created, or a volume already bound to its name.
  const known = (claim: string) => exists(claim) || claimBound(w.namespace, claim, snapshot);
  if (unsureBinding(w, snapshot) === undefined) {
    // Every class binds where the pod goes: a claim not created yet follows the pod; an ordinal
    // whose zone is not its turn's is an exception (its volume's zone, or `-`).
    out[w.uid] = rr;
    for (const ordinal of [...ordinals].sort((a, b) => a - b)) {
      const claims = claimsOf(w, ordinal);
      // A claim made by hand under a class that may bind elsewhere: its zone is not certain before the pod.
      const unsure = claims.some((claim) => !claimBound(w.namespace, claim, snapshot) && exists(claim)
        && !bindsWherePodGoes(classOf(w.namespace, claim, snapshot)));
      const zone = unsure ? NO_SEAT : seatOf(w, ordinal, claims.filter(known)) ?? NO_SEAT;
      if (zone !== turn[(ordinal - w.ordinalsStart) % turn.length]) out[`${w.uid}.${ordinal}`] = zone;
    }
    return out;
  }
  // A claim not created or not bound yet may be bound anywhere (Immediate binding): only ordinals whose claims are all bound are listed.
  out[w.uid] = `listed;${topologyKey}`;
  for (const ordinal of ordinals) {
    const claims = claimsOf(w, ordinal);
    if (claims.every((claim) => claimBound(w.namespace, claim, snapshot))) out[`${w.uid}.${ordinal}`] = seatOf(w, ordinal, claims) ?? NO_SEAT;
  }
  return out;
}

/** A claim's StorageClass, if it names one that is cached. */
function classOf(namespace: string, claim: string, snapshot: Snapshot): SlimStorageClass | undefined {
  const pvc = snapshot.pvc(namespace, claim);
  return pvc?.storageClassName ? snapshot.storageClass(pvc.storageClassName) : undefined;
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
export function seatTable(namespace: string, snapshot: Snapshot, settings: PlacementSettings, maxBytes: number, seatOf: SeatOf): SeatTable {
  const sets = [...snapshot.allWorkloads()].filter((w) => w.namespace === namespace && seatedKind(w.kind))
    .sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
  let claims: Map<string, Set<number>> | undefined;
  const claimed = () => (claims ??= claimOrdinals(namespace, snapshot));
  const data: SeatTableData = {};
  const overflow: string[] = [];
  let bytes = 0;
  for (const w of sets) {
    if (unpublishable(w, snapshot, settings) !== undefined) continue;
    const entries = entriesOf(w, snapshot, settings, claimed, seatOf);
    if (!entries) continue;
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
