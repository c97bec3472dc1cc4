import { zoneOf, type SlimNode } from './objects.js';

/** One node label's values as a code per slot: `zones[codes[slot]]`, -1 where the node has no such label. */
export interface ZoneCodes {
  codes: Int32Array;
  zones: readonly string[];
  /** The node each slot holds now: a slot read before an await may have been given to another. */
  nodes: readonly (SlimNode | undefined)[];
}

interface Column extends ZoneCodes {
  codes: Int32Array;
  zones: string[];
  codeOf: Map<string, number>;
}

/** The last names resolved, to predict the next request's from (see `resolve`). */
interface LastNames {
  names: readonly string[];
  /** `fingerprint(names[i])`. */
  prints: Int32Array;
  slots: Int32Array;
  membership: number;
}

/**
 * Nodes by slot, a small integer each node keeps while it exists, and node-label values as a
 * column by slot. A 5,000-name filter spends most of its time on memory the scheduler's own
 * work evicted between pods: one hash lookup per name, then the node object per name. Slots
 * let a request touch compact arrays instead, and `resolve` skips most lookups.
 */
export class NodeSlots {
  private readonly slotByName = new Map<string, number>();
  private readonly bySlot: (SlimNode | undefined)[] = [];
  private readonly free: number[] = [];
  /** Bumped when a name gains or loses its slot: a slot remembered across that may name another node. */
  private membership = 0;
  private readonly columns = new Map<string, Column>();
  private last: LastNames | undefined;
  /** Slot → its name's position in `last.names` (stale entries are caught by the name check). */
  private positions = new Int32Array(0);

  get size(): number { return this.slotByName.size; }
  /** Nodes by slot, read only (undefined: a free slot). */
  get bySlotView(): readonly (SlimNode | undefined)[] { return this.bySlot; }
  names(): IterableIterator<string> { return this.slotByName.keys(); }
  *nodes(): IterableIterator<SlimNode> {
    for (const node of this.bySlot) if (node) yield node;
  }

  node(name: string): SlimNode | undefined {
    const slot = this.slotByName.get(name);
    return slot === undefined ? undefined : this.bySlot[slot];
  }

  nodeAt(slot: number): SlimNode | undefined {
    return slot < 0 ? undefined : this.bySlot[slot];
  }

  set(node: SlimNode): void {
    let slot = this.slotByName.get(node.name);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.bySlot.length;
      this.slotByName.set(node.name, slot);
      this.membership++;
    }
    this.bySlot[slot] = node;
    for (const [key, column] of this.columns) {
      const zone = zoneOf(node, key);
      const code = zone === undefined ? -1 : column.codeOf.get(zone);
      // A new zone value or a grown slot range: the column is rebuilt on next use.
      if (code === undefined || slot >= column.codes.length) this.columns.delete(key);
      else column.codes[slot] = code;
    }
  }

  delete(name: string): void {
    const slot = this.slotByName.get(name);
    if (slot === undefined) return;
    this.slotByName.delete(name);
    this.bySlot[slot] = undefined;
    this.free.push(slot);
    this.membership++;
    for (const column of this.columns.values()) column.codes[slot] = -1;
  }

  /** Columns kept: for tests. */
  get columnCount(): number { return this.columns.size; }

  /**
   * The label's values by slot; built on first use and kept up to date as nodes change. The
   * key can come from a workload's annotation: at most MAX_COLUMNS are kept, the least
   * recently used dropped (it is rebuilt if asked for again).
   */
  zoneCodes(topologyKey: string): ZoneCodes {
    let column = this.columns.get(topologyKey);
    if (column) {
      this.columns.delete(topologyKey);
    } else {
      column = { codes: new Int32Array(this.bySlot.length).fill(-1), zones: [], codeOf: new Map(), nodes: this.bySlot };
      for (let slot = 0; slot < this.bySlot.length; slot++) {
        const node = this.bySlot[slot];
        const zone = node && zoneOf(node, topologyKey);
        if (zone === undefined) continue;
        let code = column.codeOf.get(zone);
        if (code === undefined) column.codeOf.set(zone, (code = column.zones.push(zone) - 1));
        column.codes[slot] = code;
      }
      if (this.columns.size >= MAX_COLUMNS) this.columns.delete(this.columns.keys().next().value!);
    }
    this.columns.set(topologyKey, column);
    return column;
  }

  /**
   * The slot of each name (-1: no such node). The names come as a few interleaved runs of
   * kube-scheduler's node order (docs/performance.md#why-the-code-is-shaped-this-way): two
   * cursors follow two runs through the last request's names, and only a miss is a lookup. A
   * guess is only taken when the names are equal and no node gained or lost its slot since,
   * so the answer is always the lookup's. While more than half the names miss (an order this
   * does not fit), the rest are looked up without guessing. The last names stay alive until
   * the next call: one request's worth, bounded by the request limit.
   */
  resolve(names: readonly string[]): Int32Array {
    const slots = new Int32Array(names.length);
    const prints = new Int32Array(names.length);
    const last = this.last?.membership === this.membership ? this.last : undefined;
    if (this.positions.length < this.bySlot.length) this.positions = new Int32Array(this.bySlot.length * 2).fill(-1);
    const { positions } = this;
    const before = last ?? NO_NAMES;
    // Where in `before` the latest run (a) and the one before it (b) were last found.
    let a = -1, b = -1, misses = 0;
    let guessing = last !== undefined;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const print = (prints[i] = fingerprint(name));
      if (guessing && misses * 2 > i + GUESS_SLACK) guessing = false;
      if (guessing) {
        let at = following(before, a, name, print);
        if (at < 0 && (at = following(before, b, name, print)) >= 0) b = a;
        if (at >= 0) {
          a = at;
          slots[i] = last!.slots[at]!;
          continue;
        }
        misses++;
      }
      const slot = this.slotByName.get(name) ?? -1;
      slots[i] = slot;
      b = a;
      a = slot >= 0 ? positions[slot]! : -1;
    }
    for (let i = 0; i < slots.length; i++) if (slots[i]! >= 0) positions[slots[i]!] = i;
    this.last = { names, prints, slots, membership: this.membership };
    return slots;
  }
}

const NO_NAMES: Pick<LastNames, 'names' | 'prints'> = { names: [], prints: new Int32Array(0) };
/** Topology keys whose columns are kept (one is the common case: the zone label). */
const MAX_COLUMNS = 8;
/** How far past a cursor a name is looked for: another run's names sit between a run's in the last request. */
const AHEAD = 10;
/** Names guessed before the miss rate may stop the guessing. */
const GUESS_SLACK = 16;

/**
 * A name's length and last three characters in one integer. Most names a guess is compared
 * with are other nodes' names, equal in length and prefix: comparing the fingerprints first
 * leaves a string comparison (a call, two strings read) for the name that is likely equal.
 */
function fingerprint(name: string): number {
  const n = name.length;
  // charCodeAt past the start is NaN, which the shift makes 0.
  return (n << 24) ^ (name.charCodeAt(n - 1) << 16) ^ (name.charCodeAt(n - 2) << 8) ^ name.charCodeAt(n - 3);
}

/** The position of `name` among the AHEAD names after `from` in `last.names`, or -1. */
function following(last: Pick<LastNames, 'names' | 'prints'>, from: number, name: string, print: number): number {
  const { names, prints } = last;
  const end = Math.min(names.length, from + 1 + AHEAD);
  for (let j = from + 1; j < end; j++) if (prints[j] === print && names[j] === name) return j;
  return -1;
}
