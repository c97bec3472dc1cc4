// Repair as the Lease holder runs it (src/controllers/repair.ts) on fake time: the work queue
// and its resync, the wait for zones to be stable, the backoff after a refused eviction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimNode } from '../../src/cluster/convert.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { healthTracker } from '../../src/controllers/layoutHealth.js';
import { repairController, type RepairOptions } from '../../src/controllers/repair.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import type { DecisionState } from '../../src/placement/policy.js';
import { silent } from '../support/app.js';
import { node, nodes, statefulSet, stsPod, storeOf } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';
import { recordingApi } from '../support/recordingApi.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const FROZEN = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zones-frozen-at': '2026-11-23T10:00:00Z', 'zonekeeper.io/rebalance': 'true' };

/** db-1 fell back to zone-a; its seat is zone-b, which has room. */
function cluster(opts: Partial<RepairOptions>, evictions: number[] = [], workloads = ['db']) {
  const clock = fakeClock(NOW);
  const roomy = nodes(ZONES, 1).map((n) => ({ ...n, status: { ...n.status, allocatable: { cpu: '8', memory: '32Gi', pods: '110' } } }));
  const store = storeOf([...roomy, ...workloads.flatMap((name) => [statefulSet(name, 3, { annotations: FROZEN }),
    ...['zone-a', 'zone-a', 'zone-c'].map((z, i) => stsPod(name, i, { nodeName: `node-${z.slice(5)}-1`, ready: true, createdAt: '2026-11-23T11:00:00Z' }))])]);
  const source = memorySource(store, 'test');
  const state: DecisionState = {
    settings: defaultSettings(), reservations: new Reservations(30, clock), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map(),
  };
  const health = healthTracker(source, state, () => {}, { settleSeconds: 60, intervalSeconds: 3600, clock }, silent);
  health.flush();
  const refusal = { message: 'Cannot evict pod as it would violate the pod\'s disruption budget.' };
  const api = recordingApi((r) => ({ status: r.path.endsWith('/eviction') ? evictions.shift() ?? 201 : 404, body: refusal }));
  const events: string[] = [];
  /** A repair controller as a Lease holder starts one: it knows nothing of an earlier holder's evictions. */
  const holder = () => repairController(api, source, health, state, { record: (_w, _type, reason) => { events.push(reason); } },
    { dryRun: false, evictionsPerMinute: 6, zoneStableSeconds: 300, intervalSeconds: 60, ...opts }, silent, createMetrics(), clock);
  const evictionsSent = () => api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/eviction')).map((r) => r.path.split('/').at(-2));
  return { clock, repair: holder(), holder, events, evictionsSent, store, health };
}

describe('repair on its work queue (fake time)', () => {
  it('waits for the zones to be stable, found by the resync; a refused eviction is tried again after its backoff, 5 s', async () => {
    const { clock, repair, events, evictionsSent } = cluster({});
    repair.start();
    try {
      await clock.advance(0);
      assert.deepEqual(repair.status().map((s) => s.decision), ['wait']);
      assert.match(repair.status()[0]!.message, /^zone zone-[ab] changed 0s ago: waiting until it has been stable for 300s$/);
      await clock.advance(299_000);
      assert.deepEqual(evictionsSent(), [], 'not before the zones are stable');
      assert.match(repair.status()[0]!.message, /changed 240s ago/, 'looked at again by the resync every 60 s');
      await clock.advance(1_000);
      assert.deepEqual(evictionsSent(), ['db-1'], 'the pod off its seat, once zone-b has been stable for 300 s');
      assert.equal(repair.status()[0]!.decision, 'evicted');
      assert.deepEqual(events, ['Rebalanced', 'Rebalanced'], 'on the workload and on the pod');
    } finally {
      await repair.stop();
    }
  });

  it('a PodDisruptionBudget\'s 429: refused, then tried again after 5 s and 10 s of backoff, not at the resync', async () => {
    const { clock, repair, evictionsSent } = cluster({ zoneStableSeconds: 0 }, [429, 429, 201]);
    repair.start();
    try {
      await clock.advance(0);
      assert.deepEqual(evictionsSent(), ['db-1']);
      assert.equal(repair.status()[0]!.decision, 'refused');
      assert.match(repair.status()[0]!.message, /disruption budget.*next try in 5s/);
      await clock.advance(4_999);
      assert.equal(evictionsSent().length, 1, 'not before the backoff is over');
      await clock.advance(1);
      assert.equal(evictionsSent().length, 2);
      assert.match(repair.status()[0]!.message, /next try in 10s/);
      await clock.advance(9_999);
      assert.equal(evictionsSent().length, 2);
      await clock.advance(1);
      assert.deepEqual(evictionsSent(), ['db-1', 'db-1', 'db-1']);
      assert.equal(repair.status()[0]!.decision, 'evicted');
    } finally {
      await repair.stop();
    }
  });

  it('a refused eviction no longer needed leaves the eviction queue: zone-b cordoned, repair waits and the retry never comes', async () => {
    const { clock, repair, evictionsSent, store, health } = cluster({ zoneStableSeconds: 0 }, [429]);
    repair.start();
    try {
      await clock.advance(0);
      assert.equal(repair.status()[0]!.decision, 'refused');
      store.upsert('nodes', slimNode(node('node-b-1', 'zone-b', { unschedulable: true })));
      health.flush();
      await clock.advance(0);
      assert.equal(repair.status()[0]!.decision, 'wait', repair.status()[0]!.message);
      await clock.advance(60_000);
      assert.deepEqual(evictionsSent(), ['db-1'], 'the refused eviction is not tried again while its step is a wait');
    } finally {
      await repair.stop();
    }
  });

  it('a dry run evicts nothing and says so once per pod, however many resyncs', async () => {
    const { clock, repair, events, evictionsSent } = cluster({ zoneStableSeconds: 0, dryRun: true });
    repair.start();
    try {
      await clock.advance(0);
      assert.equal(repair.status()[0]!.decision, 'would-evict');
      await clock.advance(600_000);
      assert.deepEqual(evictionsSent(), []);
      assert.deepEqual(events, ['WouldEvict', 'WouldEvict'], 'on the workload and on the pod, once');
      assert.match(repair.status()[0]!.message, /^pod db-1 from zone-a towards zone-b/);
    } finally {
      await repair.stop();
    }
  });

  it('rebalance.evictionsPerMinute is the eviction queue\'s pace: with 1 a minute, the second workload\'s pod goes a minute after the first\'s', async () => {
    const { clock, repair, evictionsSent } = cluster({ zoneStableSeconds: 0, evictionsPerMinute: 1 }, [], ['db', 'kv']);
    repair.start();
    try {
      await clock.advance(0);
      assert.equal(evictionsSent().length, 1, 'the burst of one');
      const waiting = repair.status().find((s) => s.decision === 'wait');
      assert.match(waiting?.message ?? '', /^pod (db|kv)-1 from zone-a towards zone-b: .*waits for its turn \(rebalance.evictionsPerMinute 1\)$/);
      await clock.advance(59_999);
      assert.equal(evictionsSent().length, 1, 'not within the minute, however many resyncs');
      await clock.advance(1);
      assert.deepEqual(evictionsSent().sort(), ['db-1', 'kv-1']);
      assert.equal(repair.status().find((s) => s.workload === waiting!.workload)?.decision, 'evicted');
    } finally {
      await repair.stop();
    }
  });

  it('stopped (the Lease lost), it does nothing more: no resync, no retry', async () => {
    const { clock, repair, evictionsSent } = cluster({ zoneStableSeconds: 0 }, [429, 429]);
    repair.start();
    await clock.advance(0);
    assert.deepEqual(evictionsSent(), ['db-1']);
    await repair.stop();
    await clock.advance(600_000);
    assert.deepEqual(evictionsSent(), ['db-1']);
  });
  it('a Lease hand-over while the last eviction\'s replacement is Pending: the new holder, remembering nothing, waits for it', async () => {
    // Six replicas: db-1 and db-4 both fell back to zone-a; their seats are in zone-b.
    const { clock, repair, holder, evictionsSent, store, health } = cluster({ zoneStableSeconds: 0 });
    addObject(store, statefulSet('db', 6, { annotations: FROZEN }));
    for (const [i, z] of [[3, 'a'], [4, 'a'], [5, 'c']] as const) addObject(store, stsPod('db', i, { nodeName: `node-${z}-1`, ready: true, createdAt: '2026-11-23T11:00:00Z' }));
    health.flush();
    repair.start();
    await clock.advance(0);
    const first = evictionsSent();
    assert.equal(first.length, 1, 'one pod moved');
    // Its replacement is made and stays unbound; the Lease goes to another replica.
    addObject(store, stsPod('db', Number(first[0]!.slice(3)), { uid: 'replacement', createdAt: '2026-11-23T12:00:00Z' }));
    health.flush();
    await clock.advance(0);
    await repair.stop();
    const second = holder();
    second.start();
    try {
      await clock.advance(120_000);
      assert.deepEqual(evictionsSent(), first, 'no second eviction while a pod of the workload is Pending');
      assert.equal(second.status()[0]?.decision, 'wait');
      assert.match(second.status()[0]!.message, new RegExp(`pod ${first[0]} is Pending`));
    } finally {
      await second.stop();
    }
  });
});
