import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pendingPod, sharedPod, slimPod, slimWorkload } from '../../src/cluster/convert.js';
import { DerivedCaches, NODE_DERIVED_KEY_BYTES } from '../../src/cluster/derivedCaches.js';
import { SELECTIONS_MAX_BYTES, sharedNeedsBytes, TOLERATION_LISTS_MAX_BYTES } from '../../src/cluster/nodeNeeds.js';
import type { SlimNode } from '../../src/cluster/objects.js';
import { parsePreferences } from '../../src/cluster/zonePreferences.js';

// What a tenant puts in its pods and workloads, created and deleted, leaves in zonekeeper's
// caches: at most their budgets in bytes, measured on the heap after a full collection.

/** A full collection where the runner did not expose one (node --test passes no --expose-gc). */
const collect = (): void => {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
};
const MiB = 1024 * 1024;

/** A required node affinity of `values` host names: 10,000 of them is 230 KiB, as in issue 71. */
const affinity = (tag: string, values = 10_000) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{
    matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: Array.from({ length: values }, (_, j) => `${tag}-node-${String(j).padStart(12, '0')}`) }],
  }] } },
});
const podWith = (name: string, spec: Record<string, unknown>) => ({ metadata: { name, namespace: 'tenant', uid: `u-${name}` }, spec });

describe('what a tenant\'s node affinities and tolerations leave behind (issue 71)', () => {
  it('300 pods with a 230 KiB affinity each, created and deleted: the shared selections stay within their budget in bytes', () => {
    const hot = slimPod(podWith('hot', { affinity: affinity('hot', 50) }));
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 300; i++) {
      const pod = slimPod(podWith(`p-${i}`, { affinity: affinity(`t${i}`) }));
      assert.ok(pod.selection!.key.length > 230 * 1000, 'the affinity is as large as the issue\'s');
      // A selection in use stays shared: pods of the same template get the very same object.
      if (i % 10 === 0) assert.equal(slimPod(podWith(`hot-${i}`, { affinity: affinity('hot', 50) })).selection, hot.selection);
    }
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(sharedNeedsBytes().selections <= SELECTIONS_MAX_BYTES, `${sharedNeedsBytes().selections} bytes counted`);
    // 300 × 230 KiB kept whole would be about 300 MiB: the budget plus noise at most.
    assert.ok(retained < SELECTIONS_MAX_BYTES + 8 * MiB, `retained ${(retained / MiB).toFixed(1)} MiB`);
  });

  it('equal selections share one frozen object, a workload\'s template with its pods; a long list keeps its set, a worker\'s copy too', () => {
    const spec = { nodeSelector: { disk: 'ssd' }, affinity: affinity('shared', 40) };
    const a = slimPod(podWith('a', structuredClone(spec)));
    const b = slimPod(podWith('b', structuredClone(spec)));
    const sts = slimWorkload('StatefulSet', { metadata: { name: 'db', namespace: 'tenant' }, spec: { replicas: 1, template: { spec: structuredClone(spec) } } });
    assert.equal(a.selection, b.selection);
    assert.equal(sts.template.selection, a.selection);
    assert.ok(Object.isFrozen(a.selection));
    assert.ok(a.selection!.affinity![0]!.matchExpressions[0]!.valueSet?.has('shared-node-000000000039'));
    // A page decoded on the worker thread arrives as a structured clone, without the set: sharing gives it back.
    const fromWorker = structuredClone(pendingPod(podWith('w', { affinity: affinity('worker', 40) })));
    assert.equal(fromWorker.selection!.affinity![0]!.matchExpressions[0]!.valueSet, undefined, 'a clone drops what is not enumerable');
    const shared = sharedPod(fromWorker);
    assert.ok(shared.selection!.affinity![0]!.matchExpressions[0]!.valueSet?.has('worker-node-000000000039'));
    assert.ok(Object.isFrozen(shared.selection));
  });

  it('1,000 distinct lists of 64 tolerations, created and deleted: the shared lists stay within their budget in bytes', () => {
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1000; i++) {
      const tolerations = Array.from({ length: 64 }, (_, j) => ({ key: `example.com/${'k'.repeat(200)}-${i}-${j}`, operator: 'Equal', value: `v${j}`, effect: 'NoSchedule' }));
      slimPod(podWith(`t-${i}`, { tolerations }));
    }
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(sharedNeedsBytes().tolerationLists <= TOLERATION_LISTS_MAX_BYTES, `${sharedNeedsBytes().tolerationLists} bytes counted`);
    assert.ok(sharedNeedsBytes().tolerationLists > TOLERATION_LISTS_MAX_BYTES / 2, 'lists are kept up to the budget');
    // Kept whole, 1,000 such lists are about 40 MiB.
    assert.ok(retained < TOLERATION_LISTS_MAX_BYTES + 8 * MiB, `retained ${(retained / MiB).toFixed(1)} MiB`);
  });
});

describe('node-derived values keyed by a tenant\'s affinity or topology key (issue 71)', () => {
  const nodes: SlimNode[] = [{
    name: 'n-1', labels: { 'topology.kubernetes.io/zone': 'zone-a' }, zone: 'zone-a', allocatable: { cpuMilli: 1000, memory: 1e9, pods: 110 },
    taints: [], unschedulable: false, ready: true,
  }];

  it('600 distinct 230 KiB keys: the kept keys stay within their bytes, the newest still answers from the cache', () => {
    const caches = new DerivedCaches(() => nodes);
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    let computed = 0;
    for (let i = 0; i < 600; i++) caches.nodeDerived(`fit\u0002${String(i).padStart(6, '0')}${'x'.repeat(230 * 1024)}`, () => ++computed);
    const newest = `fit\u0002${String(599).padStart(6, '0')}${'x'.repeat(230 * 1024)}`;
    assert.equal(caches.nodeDerived(newest, () => ++computed), 600, 'the newest is kept');
    const held = caches.nodeDerivedHeld();
    assert.ok(held.bytes <= NODE_DERIVED_KEY_BYTES, `${held.bytes} bytes counted`);
    assert.ok(held.entries < 600 && held.entries > 10, `${held.entries} kept`);
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    // Kept whole, 600 × 230 KiB would be 135 MiB.
    assert.ok(retained < NODE_DERIVED_KEY_BYTES + 8 * MiB, `retained ${(retained / MiB).toFixed(1)} MiB`);
  });

  it('1,000 workloads naming 100 KiB topology keys of their own: zones indexed and remembered for a bounded number of keys', () => {
    const caches = new DerivedCaches(() => nodes);
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1000; i++) {
      const key = `${String(i).padStart(6, '0')}${'k'.repeat(100 * 1024)}`;
      assert.deepEqual(caches.zones(key), []);
      assert.deepEqual(caches.clusterZones(key), []);
    }
    assert.deepEqual(caches.clusterZones('topology.kubernetes.io/zone'), ['zone-a'], 'the zone label is always kept');
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    // Remembered for every key, 1,000 × 100 KiB is 100 MiB, never given back.
    assert.ok(retained < 48 * MiB, `retained ${(retained / MiB).toFixed(1)} MiB`);
  });
});

describe('what is said of a wrong zone-preferences annotation', () => {
  it('one line of at most about 1 KiB, however many keys it names', () => {
    const value = JSON.stringify({ zones: {}, ...Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`unknown-${i}`, 1])) });
    const parsed = parsePreferences(value);
    assert.equal(parsed.ok, false);
    assert.ok(!parsed.ok && parsed.error.length <= 1025, `${!parsed.ok && parsed.error.length} characters`);
    assert.ok(!parsed.ok && parsed.error.startsWith('unknown-0: unknown key'));
  });
});
