import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeSlots } from '../../src/cluster/nodeSlots.js';
import { ZONE_LABEL } from '../../src/cluster/annotations.js';
import { type SlimNode } from '../../src/cluster/objects.js';
import { interleavedChunks } from '../support/nodeOrder.js';
import { seededRandom } from '../support/random.js';

const node = (name: string, zone?: string, labels: Record<string, string> = {}): SlimNode => ({
  name, labels: zone === undefined ? labels : { ...labels, [ZONE_LABEL]: zone }, zone,
  allocatable: { cpuMilli: 1000, memory: 1e9, pods: 110 }, taints: [], unschedulable: false, ready: true,
});

/** What a plain lookup per name answers: the node's name, or undefined. */
const looked = (slots: NodeSlots, names: readonly string[]) => names.map((n) => slots.node(n)?.name);
const resolved = (slots: NodeSlots, names: readonly string[]) => [...slots.resolve(names)].map((s) => slots.nodeAt(s)?.name);

/** A seeded Fisher-Yates shuffle. */
function shuffled(names: readonly string[], seed: number): string[] {
  const out = [...names];
  const { below } = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = below(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('node slots', () => {
  it('resolves every request as a lookup per name would, whatever the order, repeats and unknown names', () => {
    const slots = new NodeSlots();
    const all = Array.from({ length: 500 }, (_, i) => `node-${i}`);
    for (const [i, n] of all.entries()) slots.set(node(n, `z${i % 3}`));
    const requests = [
      all, all, interleavedChunks(all, 1), interleavedChunks(all, 2, 4, 0.9), all.slice(100, 300),
      ['node-9', 'ghost', 'node-9', 'node-10', 'node-11', 'ghost-2', 'node-12'],
      [...all].reverse(), interleavedChunks(all, 3, 1), [],
      // No order to follow: the guessing stops, the lookups go on.
      shuffled(all, 4), interleavedChunks(all, 5), shuffled(all, 6), interleavedChunks(all, 7, 16, 1),
    ];
    for (const names of requests) assert.deepEqual(resolved(slots, names), looked(slots, names));
  });

  it('names alike in length and last characters (one fingerprint) are still told apart', () => {
    const slots = new NodeSlots();
    // Every name ends in "end" and is 6 long, or is one or two characters, or not ASCII.
    const alike = Array.from({ length: 60 }, (_, i) => `${String.fromCharCode(97 + (i % 26))}${i < 26 ? 'a' : i < 52 ? 'b' : 'c'}-end`);
    const all = [...alike, 'a', 'b', 'ab', 'ba', 'ñodé', 'nodé'];
    for (const [i, n] of all.entries()) slots.set(node(n, `z${i % 3}`));
    const requests = [all, [...all].reverse(), interleavedChunks(all, 1), all, shuffled(all, 2), ['ba', 'ab', 'b', 'a', 'nodé', 'ñodé', 'ghost'], all];
    for (const names of requests) assert.deepEqual(resolved(slots, names), looked(slots, names));
  });

  it('a node deleted and its slot given to another: the slot names the new node, the old name none', () => {
    const slots = new NodeSlots();
    const names = ['a', 'b', 'c', 'd'];
    for (const n of names) slots.set(node(n, 'z1'));
    assert.deepEqual(resolved(slots, names), names);
    slots.delete('c');
    slots.set(node('e', 'z2')); // takes c's slot
    assert.deepEqual(resolved(slots, names), ['a', 'b', undefined, 'd']);
    assert.deepEqual(resolved(slots, ['a', 'b', 'e', 'd']), ['a', 'b', 'e', 'd']);
    slots.set(node('c', 'z1'));
    assert.deepEqual(resolved(slots, names), names);
  });

  it('zone codes follow node changes: a relabel, a new zone, a node gone', () => {
    const slots = new NodeSlots();
    for (const n of ['a', 'b', 'c']) slots.set(node(n, 'z1'));
    const zoneAt = (name: string, key = ZONE_LABEL) => {
      const { codes, zones } = slots.zoneCodes(key);
      const code = codes[slots.resolve([name])[0]!]!;
      return code < 0 ? undefined : zones[code];
    };
    assert.equal(zoneAt('b'), 'z1');
    slots.set(node('b', undefined)); // label removed
    assert.equal(zoneAt('b'), undefined);
    slots.set(node('b', 'z9')); // a zone the column has not seen
    assert.equal(zoneAt('b'), 'z9');
    slots.set(node('c', 'z9'));
    assert.equal(zoneAt('c'), 'z9');
    slots.delete('a');
    assert.equal(slots.zoneCodes(ZONE_LABEL).codes[slots.resolve(['a'])[0]!], undefined);
    slots.set(node('d', 'z1', { rack: 'r1' }));
    assert.equal(zoneAt('d', 'rack'), 'r1');
    assert.equal(zoneAt('b', 'rack'), undefined);
    assert.equal(slots.size, 3);
    assert.deepEqual([...slots.names()].sort(), ['b', 'c', 'd']);
    assert.deepEqual([...slots.nodes()].map((n) => n.name).sort(), ['b', 'c', 'd']);
  });

  it('keeps columns for a few topology keys (they come from workload annotations), the recent ones, each still right', () => {
    const slots = new NodeSlots();
    slots.set(node('a', 'z1', Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`key-${k}`, `v${k}`]))));
    const valueOf = (key: string) => {
      const { codes, zones } = slots.zoneCodes(key);
      return zones[codes[slots.resolve(['a'])[0]!]!];
    };
    for (let k = 0; k < 40; k++) {
      assert.equal(valueOf(ZONE_LABEL), 'z1');
      assert.equal(valueOf(`key-${k}`), `v${k}`);
    }
    assert.ok(slots.columnCount <= 8, `${slots.columnCount} columns kept`);
    slots.set(node('a', 'z2', { 'key-39': 'w' }));
    assert.equal(valueOf(ZONE_LABEL), 'z2', 'the zone label, used all along, was kept and followed the change');
    assert.equal(valueOf('key-39'), 'w');
    assert.equal(valueOf('key-0'), undefined, 'a dropped column is rebuilt from the nodes');
  });
});
