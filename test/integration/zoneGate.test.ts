import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { liftGate } from '../../src/gate/lift.js';
import type { ApiClient } from '../../src/cluster/apiClient.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { node, pv, statefulSet, stsPod } from '../support/builders.js';
import { fakeClock } from '../../src/common/clock.js';
import { silent } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { zoneGateKeeper } from '../../src/gate/keeper.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { GateFallback } from '../../src/decision/spec.js';

// The gate's one write over HTTP (docs/design.md#the-zone-gate): conditional on what was read,
// so two holders (a Lease hand-over) can never both lift a pod's gate, nor with two zones.

const zone = (z: string) => ({ kind: 'zone' as const, topologyKey: 'topology.kubernetes.io/zone', zone: z, why: '' });
const gatedPod = (ordinal: number, claims: string[] = []) => {
  const p = stsPod('db', ordinal, { claims });
  return { ...p, spec: { ...p.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } };
};

describe('lifting the zone gate against an API server', () => {
  let api: FakeApiServer;
  let client: ApiClient;
  before(async () => {
    api = await new FakeApiServer().start();
    client = api.client();
  });
  after(() => api.stop());

  it('one patch: the zone and the gate, carrying the resourceVersion read', async () => {
    api.put(gatedPod(0));
    const r = await liftGate(client, { namespace: 'default', name: 'db-0', uid: 'pod-db-0' }, zone('zone-b'));
    assert.deepEqual(r, { result: 'lifted', unwritable: undefined });
    const sent = api.patches.at(-1)!;
    assert.equal(sent.path, '/api/v1/namespaces/default/pods/db-0');
    assert.deepEqual(sent.body.spec, { schedulingGates: null, nodeSelector: { 'topology.kubernetes.io/zone': 'zone-b' } });
    assert.match(sent.body.metadata.resourceVersion, /^\d+$/);
  });

  it('two writers that read the same version: one lifts, the other is told it conflicts and writes nothing', async () => {
    api.put(gatedPod(1));
    api.holdPatches();
    const before = api.patches.length;
    const pod = { namespace: 'default', name: 'db-1', uid: 'pod-db-1' };
    const both = Promise.all([liftGate(client, pod, zone('zone-a')), liftGate(client, pod, zone('zone-c'))]);
    await waitFor(() => api.patchesHeld() === 2, 'both patches sent before either is answered');
    api.releasePatches();
    const results = await both;
    assert.deepEqual(results.map((r) => r.result).sort(), ['conflict', 'lifted']);
    assert.equal(api.patches.length - before, 1, 'one write reached the object');
  });

  it('a zone is written from the cached pod (no GET), conditional on the cached resourceVersion; a stale one is read again once', async () => {
    api.put(gatedPod(5));
    const rv = api.get('Pod', 'default', 'db-5')!.metadata.resourceVersion as string;
    const cached = { namespace: 'default', name: 'db-5', uid: 'pod-db-5', selection: undefined };
    let requests = api.requests.length;
    assert.deepEqual(await liftGate(client, { ...cached, gate: { resourceVersion: rv, otherGates: ['other.example/gate'] } }, zone('zone-a')), { result: 'lifted', unwritable: undefined });
    assert.deepEqual(api.requests.slice(requests).map((r) => r.split(' ')[0]), ['PATCH'], 'no GET');
    assert.deepEqual(api.patches.at(-1)!.body.spec, { schedulingGates: [{ name: 'other.example/gate' }], nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } });
    // The scheduler wrote the pod's status after the cache saw it: 409, then one GET and the write.
    api.put(gatedPod(6));
    const old = api.get('Pod', 'default', 'db-6')!.metadata.resourceVersion as string;
    api.put(gatedPod(6));
    requests = api.requests.length;
    const conflicts = api.conflicts;
    assert.deepEqual(await liftGate(client, { namespace: 'default', name: 'db-6', uid: 'pod-db-6', gate: { resourceVersion: old, otherGates: [] } }, zone('zone-b')), { result: 'lifted', unwritable: undefined });
    assert.deepEqual(api.requests.slice(requests).map((r) => r.split(' ')[0]), ['PATCH', 'GET', 'PATCH']);
    assert.equal(api.conflicts, conflicts + 1);
  });

  it('a pod gone, replaced under the same name, or no longer gated: nothing written', async () => {
    const before = api.patches.length;
    assert.deepEqual(await liftGate(client, { namespace: 'default', name: 'db-9', uid: 'pod-db-9' }, zone('zone-a')), { result: 'gone' });
    api.put(gatedPod(2));
    assert.deepEqual(await liftGate(client, { namespace: 'default', name: 'db-2', uid: 'an-older-uid' }, zone('zone-a')), { result: 'gone' });
    api.put(stsPod('db', 3));
    assert.deepEqual(await liftGate(client, { namespace: 'default', name: 'db-3', uid: 'pod-db-3' }, zone('zone-a')), { result: 'not-gated' });
    assert.equal(api.patches.length, before);
  });

  it('a refused write is an error naming the path', async () => {
    api.put(gatedPod(4));
    api.faults.push({ match: (m, p) => m === 'PATCH' && p.endsWith('/db-4'), status: 422, remaining: 1 });
    await assert.rejects(liftGate(client, { namespace: 'default', name: 'db-4', uid: 'pod-db-4' }, zone('zone-a')), /PATCH \/api\/v1\/namespaces\/default\/pods\/db-4: 422/);
  });
});

describe('the zone gate keeper against an API server', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await new FakeApiServer().start();
  });
  after(() => api.stop());

  it('a pod that arrives while the pass has writes in flight is written then, not after they end', async () => {
    api.holdPatches();
    const store = new ClusterStore();
    const keeper = zoneGateKeeper({
      api: api.client(), source: memorySource(store, 'test'), decide: async () => zone('zone-a'), skipForSuccessor() {}, events: { record() {} },
      opts: { intervalSeconds: 5, patchesPerSecond: 1000, fallbackEvictionsPerMinute: 0, fallbackDryRun: true }, log: silent, metrics: createMetrics(),
    });
    const arrive = (ordinal: number) => {
      api.put(gatedPod(ordinal));
      addObject(store, gatedPod(ordinal));
    };
    const patchesSent = () => api.requests.filter((r) => r.startsWith('PATCH ')).length;
    keeper.start();
    try {
      for (const o of [10, 11, 12]) arrive(o);
      await waitFor(() => patchesSent() === 3, 'the first three patches sent');
      arrive(13);
      await waitFor(() => patchesSent() === 4, 'the fourth patch sent');
      assert.equal(api.patches.length, 0, 'sent while the first three were still being answered');
      api.releasePatches();
      await waitFor(() => api.patches.length === 4, 'all four applied');
      assert.deepEqual(api.patches.map((p) => p.body.spec.nodeSelector['topology.kubernetes.io/zone']), ['zone-a', 'zone-a', 'zone-a', 'zone-a']);
    } finally {
      api.releasePatches();
      await keeper.stop();
    }
  });

  it('a new holder takes the pods gated before it started; a pod whose decision waits is decided again after the interval, once (fake time)', async () => {
    const store = new ClusterStore();
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    let waits = 1;
    const decided: string[] = [];
    const keeper = zoneGateKeeper({
      api: api.client(), source: memorySource(store, 'test'), skipForSuccessor() {}, events: { record() {} }, clock,
      decide: async (pod) => {
        decided.push(pod.name);
        if (pod.name === 'db-21' && waits-- > 0) return { kind: 'wait', why: 'every zone at its limit' };
        return zone('zone-b');
      },
      opts: { intervalSeconds: 5, patchesPerSecond: 1000, fallbackEvictionsPerMinute: 0, fallbackDryRun: true }, log: silent, metrics: createMetrics(),
    });
    const applied = () => api.patches.filter((p) => /db-2[01]$/.test(p.path)).map((p) => p.path.split('/').pop()).sort();
    // Gated while no keeper ran (the Lease held elsewhere).
    for (const o of [20, 21]) {
      api.put(gatedPod(o));
      addObject(store, gatedPod(o));
    }
    keeper.start();
    try {
      await waitFor(() => applied().includes('db-20'), 'db-20 lifted on start');
      assert.equal(keeper.reason(stsPod('db', 21).metadata.uid), 'every zone at its limit');
      await clock.advance(4900);
      assert.deepEqual(applied(), ['db-20'], 'not before the interval');
      await clock.advance(100);
      await waitFor(() => applied().includes('db-21'), 'db-21 lifted once the interval is over');
      assert.deepEqual(decided.filter((n) => n === 'db-21').length, 2, 'decided twice: it waited once');
      assert.deepEqual(decided.filter((n) => n === 'db-20').length, 1, 'a lifted pod is not decided again');
    } finally {
      await keeper.stop();
    }
  });

  it('a pod waiting on its claim, a zone\'s limit or a node is decided again when that changes, not on a timer (fake time never moves)', async () => {
    const store = new ClusterStore();
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    const decided: string[] = [];
    // db-30 waits for its claim's volume; db-31 for a pod of its workload to go; db-32 for a Ready node.
    const keeper = zoneGateKeeper({
      api: api.client(), source: memorySource(store, 'test'), skipForSuccessor() {}, events: { record() {} }, clock,
      decide: async (pod) => {
        decided.push(pod.name);
        if (pod.name === 'db-30' && !store.pvForClaim('default', 'data-db-30')) return { kind: 'wait', why: 'claim data-db-30 is not bound yet' };
        if (pod.name === 'db-31' && store.pod('default', 'db-1')) return { kind: 'wait', why: 'every zone is at its limit' };
        if (pod.name === 'db-32' && !store.node('node-new')) return { kind: 'wait', why: 'no node' };
        return zone('zone-a');
      },
      opts: { intervalSeconds: 3600, patchesPerSecond: 1000, fallbackEvictionsPerMinute: 0, fallbackDryRun: true }, log: silent, metrics: createMetrics(),
    });
    const lifted = (name: string) => api.patches.some((p) => p.path.endsWith(`/${name}`));
    addObject(store, statefulSet('db', 40));
    addObject(store, stsPod('db', 1, { nodeName: 'node-a-1' }));
    for (const o of [30, 31, 32]) {
      const raw = gatedPod(o, o === 30 ? ['data-db-30'] : []);
      api.put(raw);
      addObject(store, raw);
    }
    keeper.start();
    try {
      await waitFor(() => ['db-30', 'db-31', 'db-32'].every((n) => keeper.reason(`pod-${n}`) !== undefined), 'all three wait');
      addObject(store, pv('pv-30', 'zone-a', { claim: 'data-db-30' }));
      await waitFor(() => lifted('db-30'), 'db-30 lifted when its volume appeared');
      store.delete('pods', 'default/db-1');
      await waitFor(() => lifted('db-31'), 'db-31 lifted when a pod of its workload went away');
      assert.equal(lifted('db-32'), false);
      addObject(store, node('node-new', 'zone-a'));
      await waitFor(() => lifted('db-32'), 'db-32 lifted when a node joined Ready');
      assert.equal(clock.now(), Date.parse('2026-11-25T12:00:00Z'), 'no time passed');
    } finally {
      await keeper.stop();
    }
  });

  it('adaptive fallback: a pod lifted into a zone an autoscaler refuses a node is evicted at once, not after its time (fake time never moves)', async () => {
    const store = new ClusterStore();
    const start = Date.parse('2026-11-25T12:00:00Z');
    const clock = fakeClock(start);
    let fell: GateFallback | undefined;
    const metrics = createMetrics();
    const fallback: GateFallback = { kind: 'pin', key: 'default/StatefulSet/db#40', workload: 'default/StatefulSet/db', given: 'zone-c', afterMs: 120_000 };
    const keeper = zoneGateKeeper({
      api: api.client(), source: memorySource(store, 'test'), events: { record() {} }, clock,
      decide: async () => ({ ...zone('zone-c'), fallback }), skipForSuccessor: (fb) => { fell = fb; },
      opts: { intervalSeconds: 5, patchesPerSecond: 1000, fallbackEvictionsPerMinute: 6, fallbackDryRun: false }, log: silent, metrics,
    });
    api.put(gatedPod(40));
    addObject(store, gatedPod(40));
    api.faults.push({ match: (m, p) => m === 'POST' && p.endsWith('/pods/db-40/eviction'), status: 201, remaining: 1 });
    keeper.start();
    try {
      // Counted once the keeper has read the API server's answer and keeps the pod for its fallback.
      const lifted = async () => (await metrics.gateDecisions.get()).values.some((v) => v.labels.outcome === 'zone' && v.value === 1);
      await waitFor(lifted, 'db-40 lifted into zone-c');
      assert.ok(api.patches.some((p) => p.path.endsWith('/db-40')));
      // As the watch shows it: ungated, pending, zone-c in its spec; then the autoscaler's word.
      addObject(store, stsPod('db', 40, { nodeSelector: { 'topology.kubernetes.io/zone': 'zone-c' } }));
      assert.equal(fell, undefined, 'not before the refusal');
      store.upsert('scaleupreports', { namespace: 'default', name: 'db-40.1', pod: { name: 'db-40', uid: 'pod-db-40' }, source: 'cluster-autoscaler', message: 'pod didn\'t trigger scale-up', at: clock.now() });
      await waitFor(() => fell !== undefined, 'the seat fell back on the refusal');
      assert.equal(fell!.given, 'zone-c');
      assert.equal(clock.now(), start, 'no time passed: the 120 s were not waited out');
    } finally {
      await keeper.stop();
    }
  });
});
