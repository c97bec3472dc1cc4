// What a pod or pod template asks of a node, read from raw JSON: its node selector, required
// node affinity and tolerations (docs/design.md#the-zones-a-workload-can-use). Equal values
// among cached pods share one frozen object, kept for sharing within a budget in bytes.

import { LRUCache } from 'lru-cache';
import { CACHED_TOLERATIONS, type NodeNeeds, type NodeSelection, type NodeSelectorRequirement, type NodeSelectorTerm, type Toleration } from './objects.js';
import { str, stringMap, type Raw } from './rawFields.js';

/** Lists longer than this are also kept as a set. */
const SET_FROM = 16;

/** Bytes of distinct selections kept for sharing, and of distinct toleration lists: the least recently used go first. */
export const SELECTIONS_MAX_BYTES = 32 * 1024 * 1024;
export const TOLERATION_LISTS_MAX_BYTES = 8 * 1024 * 1024;

/** A long list also as a set (not enumerable: a worker thread's copy comes without it, and gets it here). */
function withValueSet(req: NodeSelectorRequirement): NodeSelectorRequirement {
  if (req.values.length > SET_FROM && !req.valueSet) Object.defineProperty(req, 'valueSet', { value: new Set(req.values), enumerable: false });
  return req;
}

function requirements(v: unknown): NodeSelectorRequirement[] {
  if (!Array.isArray(v)) return [];
  return v.filter((r) => r && typeof r.key === 'string').map((r) => {
    const values: string[] = Array.isArray(r.values) ? r.values.map(String) : [];
    return withValueSet({ key: r.key as string, operator: str(r.operator, 'In'), values });
  });
}

export function nodeSelectorTerm(v: unknown): NodeSelectorTerm | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const t = v as Raw;
  return { matchExpressions: requirements(t.matchExpressions), matchFields: requirements(t.matchFields) };
}

export function tolerations(v: unknown): Toleration[] {
  if (!Array.isArray(v)) return [];
  return v.filter((t) => t && typeof t === 'object').map((t) => ({
    key: str(t.key), operator: str(t.operator, 'Equal'), value: str(t.value), effect: str(t.effect),
  }));
}

/**
 * About the heap a selection holds: its key, the parsed text again (about as long), and per
 * value its array slot and string header, and its set entry where it has one.
 */
function selectionBytes(s: NodeSelection): number {
  let slots = 0;
  for (const t of s.affinity ?? []) {
    for (const r of t.matchExpressions) slots += r.values.length * (r.valueSet ? 3 : 1);
    for (const r of t.matchFields) slots += r.values.length * (r.valueSet ? 3 : 1);
  }
  return 2 * s.key.length + 24 * slots + 768;
}

const selections = new LRUCache<string, NodeSelection>({ maxSize: SELECTIONS_MAX_BYTES, sizeCalculation: selectionBytes });

/**
 * A pod spec's `nodeSelector` and required node affinity; undefined when it sets neither.
 * Equal selections share one object (a workload's pods all carry their template's).
 */
export function nodeSelection(spec: Raw | undefined, share = true): NodeSelection | undefined {
  const raw = spec?.nodeSelector;
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const nodeSelector = stringMap(raw);
  if (Object.keys(nodeSelector).length === 0 && !Array.isArray(terms)) return undefined;
  const affinity = Array.isArray(terms) ? terms.map(nodeSelectorTerm).filter((t): t is NodeSelectorTerm => !!t) : undefined;
  const key = JSON.stringify([nodeSelector, affinity ?? null]);
  return share ? sharedSelection({ nodeSelector, affinity, key }) : { nodeSelector, affinity, key };
}

/** One object per distinct selection among cached pods and workloads. */
export function sharedSelection(s: NodeSelection): NodeSelection {
  const hit = selections.get(s.key);
  if (hit) return hit;
  for (const t of s.affinity ?? []) {
    t.matchExpressions.forEach(withValueSet);
    t.matchFields.forEach(withValueSet);
  }
  // One larger than the whole budget is not kept: its pods hold it, unshared.
  selections.set(s.key, Object.freeze(s));
  return s;
}

/** What the shared selections and toleration lists hold now, in bytes (as `selectionBytes` and `tolerationListBytes` count). */
export function sharedNeedsBytes(): { selections: number; tolerationLists: number } {
  return { selections: selections.calculatedSize, tolerationLists: tolerationLists.calculatedSize };
}

/** What a workload's pod template asks of a node. */
export function templateNeeds(spec: Raw | undefined): NodeNeeds {
  return { selection: nodeSelection(spec), tolerations: tolerations(spec?.tolerations) };
}

export const NO_TOLERATIONS: readonly Toleration[] = Object.freeze([]);
/** About the heap a shared list holds: its key, the strings again, and each toleration object. */
const tolerationListBytes = (list: readonly Toleration[], key: string) => 2 * key.length + 200 * list.length + 512;
const tolerationLists = new LRUCache<string, readonly Toleration[]>({ maxSize: TOLERATION_LISTS_MAX_BYTES, sizeCalculation: tolerationListBytes });

// One key for a list of tolerations, read from raw JSON or from slim ones alike.
export const tolerationKey = (t: Raw) => `${str(t.key)}\u0000${str(t.operator, 'Equal')}\u0000${str(t.value)}\u0000${str(t.effect)}\u0001`;

export function sharedList(key: string, make: () => Toleration[]): readonly Toleration[] {
  let shared = tolerationLists.get(key);
  if (!shared) tolerationLists.set(key, (shared = Object.freeze(make())));
  return shared;
}

/** A cached pod's tolerations: capped, and one frozen list per distinct value. */
export function sharedTolerations(v: unknown): readonly Toleration[] {
  if (!Array.isArray(v) || v.length === 0) return NO_TOLERATIONS;
  // Keyed by the raw fields: most pods repeat a few lists, and a hit builds no objects.
  let key = '';
  let kept = 0;
  for (const t of v) {
    if (!t || typeof t !== 'object') continue;
    if (kept++ === CACHED_TOLERATIONS) break;
    key += tolerationKey(t);
  }
  return kept === 0 ? NO_TOLERATIONS : sharedList(key, () => tolerations(v).slice(0, CACHED_TOLERATIONS));
}
