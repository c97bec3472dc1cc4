// The gate keeper's queue on fake time (src/controllers/zoneGateKeeper.ts), against an API in
// memory: lifts paced by the queue's token bucket (each pod queued takes its turn), a pod that
// waits decided again at the resync, a refused write retried after the queue's backoff.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterStore } from '../../src/cluster/store.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { zoneGateKeeper } from '../../src/gate/keeper.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { SpecDecision } from '../../src/decision/spec.js';
import { silent } from '../support/app.js';
import { deployment, rsPod, stsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { recordingApi } from '../support/recordingApi.js';
import { writeTimes } from '../support/wait.js';

const zone = (z: string): SpecDecision => ({ kind: 'zone', topologyKey: 'topology.kubernetes.io/zone', zone: z, why: '' });
const gatedPod = (ordinal: number) => {
  const p = stsPod('db', ordinal);
  return { ...p, metadata: { ...p.metadata, resourceVersion: '5' }, spec: { ...p.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } };
};

function keeper(o: { patchesPerSecond: number; decide?: (name: string) => SpecDecision; refuse?: number[] }) {
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  const store = new ClusterStore();
  const decided: string[] = [];
  const refuse = [...(o.refuse ?? [])];
  const api = recordingApi(() => ({ status: refuse.shift() ?? 200 }));
  const k = zoneGateKeeper({
    api, source: memorySource(store, 'test'), skipForSuccessor() {}, events: { record() {} }, clock,
    decide: async (pod) => {
      decided.push(pod.name);
      return o.decide?.(pod.name) ?? zone('zone-a');
    },
    opts: { intervalSeconds: 5, patchesPerSecond: o.patchesPerSecond, fallbackEvictionsPerMinute: 0, fallbackDryRun: true },
    log: silent, metrics: createMetrics(),
  });
  const patched = () => api.requests.filter((r) => r.method === 'PATCH').map((r) => r.path.split('/').pop());
  const gate = (...ordinals: number[]) => { for (const o of ordinals) addObject(store, gatedPod(o)); };
  return { clock, k, decided, patched, gate };
}

describe('the zone gate keeper on its queue (fake time)', () => {
  it('lifts paced by the queue\'s token bucket, 10 a second: one now, then one per 100 ms, never two; each pod takes its turn as it is queued, one that waits too', async () => {
    const { clock, k, decided, patched, gate } = keeper({ patchesPerSecond: 10, decide: (name) => (name === 'db-3' ? { kind: 'wait', why: 'no room' } : zone('zone-a')) });
    gate(0, 1, 2, 3, 4);
    k.start();
    try {
      const at = await writeTimes(clock, () => patched().length, 600, 10);
      assert.deepEqual(patched().sort(), ['db-0', 'db-1', 'db-2', 'db-4']);
      assert.equal(at[0], 0, 'the first at once');
      for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= 100, `never two within 100 ms: ${at}`);
      assert.deepEqual(at, [0, 100, 200, 400], 'db-3 was decided at its turn (300 ms) and waits');
      assert.equal(k.reason('pod-db-3'), 'no room');
      assert.deepEqual(decided.filter((n) => n === 'db-3'), ['db-3']);
    } finally {
      await k.stop();
    }
  });

  it('a pod that waits is decided again at the resync, every intervalSeconds', async () => {
    let waits = 2;
    const { clock, k, decided, patched, gate } = keeper({ patchesPerSecond: 1000, decide: () => (waits-- > 0 ? { kind: 'wait', why: 'no room' } : zone('zone-b')) });
    gate(7);
    k.start();
    try {
      await clock.advance(4999);
      assert.deepEqual(decided, ['db-7']);
      await clock.advance(1);
      assert.deepEqual(decided, ['db-7', 'db-7']);
      await clock.advance(5000);
      assert.deepEqual(patched(), ['db-7']);
      await clock.advance(20_000);
      assert.deepEqual(decided.length, 3, 'a lifted pod is not decided again');
    } finally {
      await k.stop();
    }
  });

  it('a refused write is retried after the queue\'s backoff (200 ms, then 400 ms), not sooner by the resync or an event', async () => {
    const { clock, k, patched, gate } = keeper({ patchesPerSecond: 1000, refuse: [500, 500] });
    gate(8);
    k.start();
    try {
      await clock.advance(0);
      assert.equal(patched().length, 1);
      gate(8); // the watch shows the pod again: an add while it backs off
      await clock.advance(199);
      assert.equal(patched().length, 1);
      await clock.advance(1);
      assert.equal(patched().length, 2);
      await clock.advance(399);
      assert.equal(patched().length, 2);
      await clock.advance(1);
      assert.equal(patched().length, 3, 'lifted on the third try');
    } finally {
      await k.stop();
    }
  });
});

describe('a subset patch the gate could not write whole', () => {
  const SETTING = 'admission applies it whole only for a caller known to be kube-apiserver: set admission.tls.clientCAFile or admission.trustNetwork';
  const term = { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a'] }], matchFields: [] };
  const subset: SpecDecision = { kind: 'subset', workloadSpread: 'arch', subset: 'x86', term, preferred: [], tolerations: [], why: '', patch: { metadata: { labels: { arch: 'x86' } } } };

  async function lifted(setting: string | undefined) {
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    const store = new ClusterStore();
    const p = rsPod('web', 'a');
    const stored = { ...p, metadata: { ...p.metadata, resourceVersion: '5' }, spec: { ...p.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } };
    for (const o of [...deployment('web', 2), workloadSpread('arch', { kind: 'Deployment', name: 'web' }, [zoneSubset('x86', 'zone-a')])]) addObject(store, o);
    const events: { kind: string; reason: string; message: string }[] = [];
    const api = recordingApi((r) => ({ status: 200, body: r.method === 'GET' ? stored : {} }));
    const k = zoneGateKeeper({
      api, source: memorySource(store, 'test'), skipForSuccessor() {}, clock, decide: async () => subset,
      events: { record: (o, _type, reason, message) => events.push({ kind: 'targetRef' in o ? 'WorkloadSpread' : 'nodeName' in o ? 'Pod' : o.kind, reason, message }) },
      subsetPatchesOwned: true, subsetPatchSetting: setting,
      opts: { intervalSeconds: 5, patchesPerSecond: 1000, fallbackEvictionsPerMinute: 0, fallbackDryRun: true }, log: silent, metrics: createMetrics(),
    });
    addObject(store, stored);
    k.start();
    for (let i = 0; i < 10 && !events.some((e) => e.kind === 'Deployment'); i++) await clock.advance(10);
    await k.stop();
    const patch = api.requests.find((r) => r.method === 'PATCH')?.body;
    return { events: events.filter((e) => e.reason === 'SubsetPatchNotApplied'), patch };
  }

  it('under the default the pod, the WorkloadSpread and its workload are told, each naming the setting that would apply it', async () => {
    const { events, patch } = await lifted(SETTING);
    assert.equal(patch.metadata.annotations['zonekeeper.io/subset-patch-not-applied'], 'metadata.labels');
    assert.deepEqual(events.map((e) => e.kind), ['Pod', 'WorkloadSpread', 'Deployment']);
    for (const e of events) assert.ok(e.message.endsWith(`; ${SETTING}`), e.message);
    assert.match(events[2]!.message, /^WorkloadSpread arch subset x86: pods decided by the zone gate after their creation do not get metadata\.labels of its patch/);
  });

  it('where admission decides pods (a client CA, a trusted network) no setting is named', async () => {
    const { events } = await lifted(undefined);
    assert.equal(events.length, 3);
    for (const e of events) assert.doesNotMatch(e.message, /admission\.tls\.clientCAFile|trustNetwork/, e.message);
  });
});
