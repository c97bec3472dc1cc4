import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_KIND_NAMES } from '../../src/cluster/kinds.js';
import { forEachListSlice, nextCut, SLICE_BYTES } from '../../src/cluster/listSlices.js';
import { loadObjects } from '../../src/cluster/source.js';

/** Objects embedded in an item that begin as items do (a StatefulSet's claim templates): `n` of them. */
const embedded = (n: number) => Array.from({ length: n }, (_, k) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `data-${k}` } }));

/** A pod as the API serves it, with nested `},{"apiVersion"` runs that look like item boundaries. */
function rawPod(i: number, templates = i % 20 === 5 ? 2 : 0): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: `web-${i}`, namespace: `team-${i % 3}`, uid: `uid-${i}`,
      labels: { app: 'web', 'topology.kubernetes.io/zone': `zone-${i % 3}` },
      // apiVersion first, then kind, but no metadata: never a cut.
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs-1' }, { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'n-1' }],
      managedFields: [{ apiVersion: 'v1', fieldsType: 'FieldsV1', manager: 'kubelet' }, { apiVersion: 'v1', fieldsType: 'FieldsV1', manager: 'kubectl' }],
      // Strings holding the boundary's text, escaped as JSON must: never a cut.
      annotations: { note: '},{"apiVersion":"v1","kind":"Pod"}', spaced: `}, \n {  "apiVersion" é ${'ü'.repeat(i % 5)}` },
    },
    spec: { nodeName: `node-${i % 7}`, containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }, { name: 'b' }], templates: embedded(templates) },
    status: { phase: 'Running' },
  };
}

const list = (items: unknown[], kindFirst = true) => kindFirst
  ? { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } }
  : { apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } };

/** What forEachListSlice handed over, slice by slice. */
function slices(text: string, sliceBytes: number) {
  const taken: unknown[][] = [];
  const frame = forEachListSlice(Buffer.from(text), (items) => taken.push(items), sliceBytes);
  return { frame, taken, items: taken.flat() };
}

/** Every kind's keys and every pod, to compare two stores. */
function contents(text: string | Buffer) {
  const { store, loaded } = loadObjects(text, 'test');
  const keys = Object.fromEntries(ALL_KIND_NAMES.map((k) => [k, store.keys(k).sort()]));
  const pods = store.keys('pods').sort().map((key) => {
    const [ns, name] = key.split('/');
    return store.pod(ns!, name!);
  });
  return { loaded, keys, pods };
}

describe('a JSON List read a slice at a time', () => {
  const items = Array.from({ length: 60 }, (_, i) => rawPod(i));

  for (const [style, space] of [['compact', undefined], ['kubectl-indented', 4]] as const) {
    for (const kindFirst of [true, false]) {
      it(`${style}, kind ${kindFirst ? 'before' : 'after'} items: the same items in the same order as one JSON.parse, over many slices`, () => {
        const text = JSON.stringify(list(items, kindFirst), null, space);
        const got = slices(text, 300);
        assert.deepEqual(got.frame, { kind: 'List' });
        assert.deepEqual(got.items, items);
        assert.ok(got.taken.length > 10, `${got.taken.length} slices`);
      });
    }
  }

  it('a cut inside an item (embedded objects) is widened to the next one, not taken', () => {
    const text = JSON.stringify(list(items));
    const bytes = Buffer.from(text);
    // Every candidate, in order: between two items, or between two embedded objects (items 5, 25, 45).
    const cuts: number[] = [];
    for (let at = nextCut(bytes, 0); at >= 0; at = nextCut(bytes, at + 1)) cuts.push(at);
    const between = cuts.filter((c) => bytes.toString('utf8', c, c + 32) === ',{"apiVersion":"v1","kind":"Pod"');
    assert.equal(between.length, items.length - 1);
    assert.equal(cuts.length - between.length, 3, 'one candidate per item with two embedded objects; none in owner references or managed fields');
    // A first slice reaching just short of the cut inside item 5 must take item 5 whole.
    const inside = cuts.find((c) => !between.includes(c))!;
    const got = slices(text, inside - 3);
    assert.deepEqual(got.taken[0], items.slice(0, 6));
    assert.deepEqual(got.items, items);
    for (const size of [1, 50, 700, 5000]) assert.deepEqual(slices(text, size).items, items, `slices of ${size}`);
  });

  it('gives up, and takes nothing more, when the text is not a List it can cut', () => {
    const pod = JSON.stringify(rawPod(1));
    const cases: Record<string, string> = {
      'an array of objects': JSON.stringify(items),
      'items not the last field before the cut': `{"items":[],"kind":"List","other":[${pod},${pod},${pod}]}`,
      'items twice (the first would win the cut)': `{"items":[],"kind":"List","items":[${pod},${pod},${pod}]}`,
      truncated: JSON.stringify(list(items)).slice(0, -40),
      'broken in the middle': JSON.stringify(list(items)).replace('"web-30"', '"web-30'),
      'no boundary at all': JSON.stringify(list([{ kind: 'Pod' }])),
    };
    for (const [name, text] of Object.entries(cases)) assert.equal(slices(text, 100).frame, undefined, name);
  });

  it("a file ending inside an item's first fields has no cut there, and loads as one parse would fail", () => {
    for (const end of ['{"apiVersion":"v1",', '{"apiVersion":"v1","kind":"Pod",  ', '{"apiVersion":"v1","ki', '{"apiVersion":"v']) {
      const text = `{"kind":"List","items":[{"a":1},${end}`;
      assert.equal(nextCut(Buffer.from(text), 0), -1, end);
      assert.equal(slices(text, 1).frame, undefined, end);
    }
  });

  it('gives up after eight cuts inside items in the whole file, each of which parsed a slice again', () => {
    const text = JSON.stringify(list(Array.from({ length: 40 }, (_, i) => rawPod(i, 6))));
    assert.equal(slices(text, 200).frame, undefined);
    // One cut (at most five misses before it) is within the budget.
    assert.ok(text.length < 80_000, `${text.length}`);
    assert.deepEqual(slices(text, 40_000).frame, { kind: 'List' });
  });

  it('returns the frame for a caller to judge: not a List kind when the object is not one', () => {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', items });
    assert.deepEqual(slices(text, 300).frame, { kind: 'Pod' });
  });

  it('loads a file above a slice into the same store as one parse, and the same when it falls back', () => {
    const big = Array.from({ length: Math.ceil((3 * SLICE_BYTES) / 500) }, (_, i) => rawPod(i));
    const texts = {
      list: JSON.stringify(list(big, false), null, 4),
      'not a List': JSON.stringify({ apiVersion: 'v1', kind: 'PodList-ish', items: big }).replace('PodList-ish', 'Bag'),
      'an array': JSON.stringify(big),
    };
    for (const [name, text] of Object.entries(texts)) {
      assert.ok(text.length > 2 * SLICE_BYTES, name);
      if (name === 'not a List') {
        // One object of a kind zonekeeper does not read: refused, whether read from bytes or text.
        for (const input of [Buffer.from(text), text]) assert.throws(() => loadObjects(input, 'bag.json'), /^SnapshotFileError: bag\.json: only kinds zonekeeper does not read \(Bag\)/);
        continue;
      }
      const fromBytes = contents(Buffer.from(text));
      assert.deepEqual(fromBytes, contents(text), name);
      assert.equal(fromBytes.loaded.loaded, big.length, name);
    }
    // Cut short, it fails as one parse did: JSON's error, named by the file.
    const small = JSON.stringify(list(Array.from({ length: Math.ceil((1.2 * SLICE_BYTES) / 90) }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}` } }))));
    assert.throws(() => loadObjects(Buffer.from(small.slice(0, -100)), 'cluster.json'), /^SnapshotFileError: cluster\.json: not valid JSON/);
  });
});

describe("a file's times moved as it loads (the demo's, to its start)", () => {
  const objects = [
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'p', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: {} },
    {
      apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { replicas: 1 },
      metadata: { name: 's', namespace: 'default', uid: 's', annotations: { 'zonekeeper.io/zones-frozen-at': '2025-12-31T00:00:00Z', 'zonekeeper.io/zones': 'a,b' } },
    },
  ];
  const day = 86_400_000;
  for (const [form, content] of [['YAML', objects.map((o) => JSON.stringify(o)).join('\n---\n')], ['a JSON List', new TextEncoder().encode(JSON.stringify({ kind: 'List', items: objects }))]] as const) {
    it(`${form}: creation times and a frozen list's time move by the shift, nothing else`, () => {
      const { store } = loadObjects(content, 'test', day);
      assert.equal(store.pod('default', 'p')!.createdAt, Date.parse('2026-01-02T00:00:00Z'));
      const s = store.workload('StatefulSet', 'default', 's')!;
      assert.deepEqual(s.annotations, { 'zonekeeper.io/zones-frozen-at': '2026-01-01T00:00:00.000Z', 'zonekeeper.io/zones': 'a,b' });
      assert.equal(loadObjects(content, 'test').store.pod('default', 'p')!.createdAt, Date.parse('2026-01-01T00:00:00Z'), 'no shift: as written');
    });
  }
});
