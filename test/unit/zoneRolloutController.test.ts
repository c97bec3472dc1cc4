// Zone-by-zone rollouts as the Lease holder runs them (src/controllers/zoneRollout.ts), on fake
// time against a stand-in StatefulSet controller and kubelets (test/support/rolloutCluster.ts):
// the order and batches, never two zones down, a hand-over between two holders mid-rollout, a
// pause at the progress deadline and its end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { evictPod } from '../../src/controllers/eviction.js';
import { zoneRolloutController } from '../../src/controllers/zoneRollout.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { silent } from '../support/app.js';
import { defaultSettings } from '../support/placement.js';
import { rolloutCluster, type RolloutClusterOptions } from '../support/rolloutCluster.js';

const PAUSED = 'zonekeeper.io/zone-rollout-paused';

function setUp(o: RolloutClusterOptions) {
  const clock = fakeClock(Date.parse('2026-11-27T12:00:00Z'));
  const cluster = rolloutCluster(clock, o);
  const source = memorySource(cluster.store, 'test');
  const events: { reason: string; message: string }[] = [];
  const metrics = createMetrics();
  const holder = () => zoneRolloutController({
    api: cluster.api, source, settings: defaultSettings(), lists: { pendingFreezes: NO_PENDING_FREEZES },
    evict: (pod) => evictPod(cluster.api, pod, silent), events: { record: (_w, _t, reason, message) => { events.push({ reason, message }); } },
    opts: { maxUnavailable: 'zone', batchGrowth: 2, progressDeadlineSeconds: 60, intervalSeconds: 10 }, log: silent, metrics, clock,
  });
  /** Moves time in steps of 250 ms until `done` or `ms` have passed; the most zones ever down at once. */
  const run = async (ms: number, done: () => boolean = () => false) => {
    let worst = 0;
    for (let t = 0; t < ms && !done(); t += 250) {
      await clock.advance(250);
      worst = Math.max(worst, cluster.zonesDown().length);
    }
    return worst;
  };
  const finished = () => cluster.revisions().every((r) => r === 'db-r2') && cluster.zonesDown().length === 0;
  return { clock, cluster, events, metrics, holder, run, finished };
}

describe('zone-by-zone rollouts on their work queue (fake time)', () => {
  it('9 pods over 3 zones: zone-a, b, c in the list\'s order, the highest ordinal first, batches of 1 then 2; never two zones down', async () => {
    const { cluster, events, metrics, holder, run, finished } = setUp({ replicas: 9 });
    const rollouts = holder();
    rollouts.start();
    try {
      assert.equal(await run(5_000), 0, 'nothing moves before the template changes');
      assert.equal(cluster.evictions.length, 0);
      cluster.update('db-r2');
      const worst = await run(120_000, finished);
      assert.ok(finished(), `every pod on db-r2 and Ready (revisions: ${cluster.revisions().join(',')})`);
      assert.equal(worst, 1, 'one zone down at a time, never two');
      // Ordinals are pinned round-robin: zone-a holds 0, 3, 6; zone-b 1, 4, 7; zone-c 2, 5, 8.
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-6', 'db-3', 'db-0', 'db-7', 'db-4', 'db-1', 'db-8', 'db-5', 'db-2']);
      const batches = events.filter((e) => e.reason === 'ZoneRolloutStep').map((e) => e.message.replace(/ \(.*?\)/, '').replace(/ to revision db-r2/, ''));
      assert.deepEqual(batches, [
        'zone-a, batch 1: evicted db-6', 'zone-a, batch 2: evicted db-3, db-0',
        'zone-b, batch 1: evicted db-7', 'zone-b, batch 2: evicted db-4, db-1',
        'zone-c, batch 1: evicted db-8', 'zone-c, batch 2: evicted db-5, db-2',
      ]);
      assert.match(await metrics.registry.metrics(), /zonekeeper_rollout_pods_replaced_total 9/);
      assert.equal(rollouts.status()[0]!.decision, 'done');
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });

  it('batch growth 0 and maxUnavailable "zone": a zone at a time, three batches for 9 pods', async () => {
    const { cluster, events, holder, run, finished } = setUp({ replicas: 9, annotations: { 'zonekeeper.io/zone-rollout-batch-growth': '0' } });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      assert.equal(await run(120_000, finished), 1);
      assert.ok(finished());
      assert.deepEqual(events.filter((e) => e.reason === 'ZoneRolloutStep').map((e) => e.message.replace(/ \(.*/, '')), ['zone-a, batch 1', 'zone-b, batch 1', 'zone-c, batch 1']);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });

  it('minReadySeconds: the next batch waits until the last one has been Ready that long', async () => {
    const { clock, cluster, holder, run } = setUp({ replicas: 3, minReadySeconds: 30, readyMs: 1_000 });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(3_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-0']);
      const readyAt = clock.now();
      await run(26_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-0'], 'not before db-0 has been Ready for 30 s');
      assert.match(rollouts.status()[0]!.message, /minReadySeconds \(30\)/);
      await run(6_000, () => cluster.evictions.length > 1);
      assert.equal(cluster.evictions[1]!.name, 'db-1');
      assert.ok(cluster.evictions[1]!.at - readyAt >= 27_000, `db-1 evicted ${cluster.evictions[1]!.at - readyAt} ms after db-0's successor was Ready`);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });

  it('a hand-over mid-rollout: the second holder goes on from the cluster, no pod evicted twice, none skipped, never two zones down', async () => {
    const { cluster, holder, run, finished } = setUp({ replicas: 9 });
    const first = holder();
    const second = holder();
    first.start();
    cluster.update('db-r2');
    let worst = await run(60_000, () => cluster.evictions.length >= 4);
    // The Lease lost right after zone-b's first batch: the old holder stops, a new one starts.
    await first.stop();
    const handedOver = cluster.evictions.length;
    second.start();
    try {
      worst = Math.max(worst, await run(120_000, finished));
      assert.ok(finished());
      assert.equal(worst, 1);
      const uids = cluster.evictions.map((e) => e.uid);
      assert.equal(new Set(uids).size, uids.length, 'no pod evicted twice');
      assert.equal(uids.length, 9, 'every old pod evicted once');
      assert.equal(handedOver, 4);
      assert.deepEqual(cluster.evictions.slice(handedOver).map((e) => e.name), ['db-4', 'db-1', 'db-8', 'db-5', 'db-2'], 'zone-b goes on with its second batch');
    } finally {
      await second.stop();
      cluster.stop();
    }
  });

  it('a pod not Ready within the progress deadline pauses the rollout (annotation, Event, metric); a resume gives it the deadline again; a new revision ends the pause', async () => {
    const { cluster, events, metrics, holder, run } = setUp({ replicas: 6, stuck: new Set(['db-3']) });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(90_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-3'], 'nothing after db-3, whose successor is never Ready');
      const paused = JSON.parse(cluster.sts.metadata.annotations[PAUSED]);
      assert.equal(paused.revision, 'db-r2');
      assert.match(paused.why, /pod db-3 in zone-a \(revision db-r2\) not available 6\ds after it was created; the progress deadline is 60s/);
      assert.equal(events.filter((e) => e.reason === 'ZoneRolloutPaused').length, 1);
      assert.match(await metrics.registry.metrics(), /zonekeeper_rollout_pauses_total 1/);
      assert.equal(rollouts.status()[0]!.decision, 'paused');

      // A user resumes it: db-3 has a deadline from now, and pauses it again when it passes.
      cluster.annotate(PAUSED, undefined);
      await run(30_000);
      assert.equal(cluster.sts.metadata.annotations[PAUSED], undefined, 'not paused again before the deadline');
      await run(40_000);
      assert.match(JSON.parse(String(cluster.sts.metadata.annotations[PAUSED])).why, /db-3/);
      assert.equal(cluster.evictions.length, 1);

      // A new template: the pause was for db-r2 only.
      cluster.pods.get('db-3')!.metadata.labels['controller-revision-hash'] = 'db-r2';
      cluster.update('db-r3');
      await run(2_000);
      assert.equal(cluster.sts.metadata.annotations[PAUSED], undefined, 'the pause for db-r2 is removed');
      assert.equal(events.filter((e) => e.reason === 'ZoneRolloutResumed').length, 1);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });

  it('an outage elsewhere past the progress deadline pauses the rollout on that pod; the pod available again resumes it by itself, never two zones down', async () => {
    let outage = true;
    const { clock, cluster, events, holder, run, finished } = setUp({ replicas: 6, stuck: (name, revision) => outage && name === 'db-4' && revision === 'db-r1' });
    // db-4 (zone-b, db-r1) goes down before the new template and stays down.
    cluster.pods.get('db-4')!.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(clock.now()).toISOString() }];
    cluster.put(cluster.pods.get('db-4')!);
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(90_000);
      assert.equal(cluster.evictions.length, 0, 'nothing goes while zone-b is down');
      const paused = JSON.parse(cluster.sts.metadata.annotations[PAUSED]);
      assert.deepEqual([paused.revision, paused.waitsOn], ['db-r2', 'db-4']);
      assert.match(events.find((e) => e.reason === 'ZoneRolloutPaused')!.message, /it resumes when pod db-4 is available/);
      // Still down a while later: still paused.
      await run(60_000);
      assert.equal(cluster.evictions.length, 0);
      assert.equal(rollouts.status()[0]!.decision, 'paused');
      outage = false;
      const worst = await run(120_000, finished);
      assert.ok(finished(), `every pod on db-r2 and Ready (${cluster.revisions().join(',')}; ${rollouts.status()[0]?.message})`);
      assert.equal(worst, 1, 'never two zones down');
      assert.equal(cluster.sts.metadata.annotations[PAUSED], undefined);
      assert.match(events.find((e) => e.reason === 'ZoneRolloutResumed')!.message, /pod db-4, which the rollout paused on, is available again/);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });

  it('a pause written by hand holds whatever the revision, until it is removed', async () => {
    const { cluster, holder, run } = setUp({ replicas: 3, annotations: { [PAUSED]: 'maintenance window' } });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(20_000);
      assert.equal(cluster.evictions.length, 0);
      assert.match(rollouts.status()[0]!.message, /paused by hand \(zonekeeper.io\/zone-rollout-paused: "maintenance window"\)/);
      cluster.annotate(PAUSED, undefined);
      await run(1_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-0']);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });
  it('a rollback never waits behind its own bad pod: 6 pods, db-r2 rolled through zone-a, db-4 (zone-b) never Ready, paused; rolled back to db-r1, db-4 goes first', async () => {
    const { cluster, events, holder, run } = setUp({ replicas: 6, stuck: (name, revision) => name === 'db-4' && revision === 'db-r2' });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(120_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-3', 'db-0', 'db-4']);
      assert.match(JSON.parse(cluster.sts.metadata.annotations[PAUSED]).why, /pod db-4 in zone-b/);
      // Rolled back to db-r1 exactly: db-0, db-3 (zone-a) are Ready on db-r2, db-4 (zone-b) never was.
      cluster.update('db-r1');
      const rolledBack = () => cluster.revisions().every((r) => r === 'db-r1') && cluster.zonesDown().length === 0;
      const worst = await run(120_000, rolledBack);
      assert.ok(rolledBack(), `every pod back on db-r1 and Ready (${cluster.revisions().join(',')}; ${rollouts.status()[0]?.message})`);
      assert.equal(worst, 1, 'never two zones down');
      assert.deepEqual(cluster.evictions.slice(3).map((e) => e.name), ['db-4', 'db-0', 'db-3'], 'its own down pod first, then the newest first');
      assert.equal(cluster.sts.metadata.annotations[PAUSED], undefined);
      assert.equal(events.filter((e) => e.reason === 'ZoneRolloutResumed').length, 1);
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });
  it('the pods watch ahead of the StatefulSet watch: a pod of a revision the cache does not show yet is never taken for an old one', async () => {
    const { cluster, holder, run } = setUp({ replicas: 9 });
    const rollouts = holder();
    rollouts.start();
    try {
      cluster.update('db-r2');
      await run(10_000, () => cluster.evictions.length >= 1);
      // A new template (db-r3) the StatefulSet controller has seen; zonekeeper's cache still shows db-r2.
      cluster.sts.metadata.generation++;
      cluster.sts.status = { ...cluster.sts.status, observedGeneration: cluster.sts.metadata.generation, updateRevision: 'db-r3' };
      cluster.sts.metadata.resourceVersion = String(Number(cluster.sts.metadata.resourceVersion) + 1);
      await run(20_000);
      assert.equal(cluster.pods.get('db-6')!.metadata.labels['controller-revision-hash'], 'db-r3', 'db-6 made again on db-r3');
      assert.deepEqual(cluster.evictions.map((e) => e.name), ['db-6'], 'db-6 (db-r3) is not evicted as an old pod');
      assert.match(rollouts.status()[0]!.message, /db-r3/);
      // The watch catches up: the rollout goes on to db-r3.
      cluster.put(cluster.sts);
      await run(5_000, () => cluster.evictions.length >= 2);
      assert.notEqual(cluster.evictions[1]?.name, 'db-6');
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });
  it('no step twice whatever the cache shows: a pod the cache has on the old revision but the API on the new one is not evicted', async () => {
    const { cluster, holder, run } = setUp({ replicas: 9 });
    const rollouts = holder();
    rollouts.start();
    try {
      // db-6 (first to go) already replaced in the API, its new revision not yet in the cache.
      cluster.pods.get('db-6')!.metadata.labels['controller-revision-hash'] = 'db-r2';
      cluster.update('db-r2');
      await run(5_000);
      assert.deepEqual(cluster.evictions.map((e) => e.name), [], 'db-6 is not evicted from a stale view');
      assert.match(rollouts.status()[0]!.message, /pod db-6 is on revision db-r2 in the API, an older one in the cache/);
      // The watch catches up: the rollout goes on with the next pod.
      cluster.put(cluster.pods.get('db-6')!);
      await run(5_000, () => cluster.evictions.length >= 1);
      assert.equal(cluster.evictions[0]?.name, 'db-3');
    } finally {
      await rollouts.stop();
      cluster.stop();
    }
  });
  it('a new revision whose first step is itself a pause replaces the old revision\'s pause record', async () => {
    const { clock, cluster, events, holder, run } = setUp({ replicas: 6, stuck: new Set(['db-3']) });
    const first = holder();
    first.start();
    cluster.update('db-r2');
    await run(90_000);
    assert.equal(JSON.parse(cluster.sts.metadata.annotations[PAUSED]).revision, 'db-r2');
    // No holder for a while: a new template, and a user deletes the stuck pod, made again on db-r3 and as stuck.
    await first.stop();
    cluster.update('db-r3');
    cluster.pods.get('db-3')!.metadata.deletionTimestamp = new Date(clock.now()).toISOString();
    cluster.put(cluster.pods.get('db-3')!);
    await run(90_000);
    assert.equal(cluster.pods.get('db-3')!.metadata.labels['controller-revision-hash'], 'db-r3');
    const second = holder();
    second.start();
    try {
      await run(2_000);
      const paused = JSON.parse(cluster.sts.metadata.annotations[PAUSED]);
      assert.equal(paused.revision, 'db-r3', 'the record is for the revision paused now');
      assert.match(paused.why, /pod db-3 in zone-a \(revision db-r3\)/);
      assert.equal(events.filter((e) => e.reason === 'ZoneRolloutPaused').length, 2);
      assert.equal(second.status()[0]!.decision, 'paused');
    } finally {
      await second.stop();
      cluster.stop();
    }
  });
});
