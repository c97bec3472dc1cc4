// A zone-by-zone rollout as every replica shows it: the `rollout` of /debug/health, /debug/rollouts
// and the per-workload rollout gauges, from the pods and the pause annotation in the cache.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { testApp } from '../support/app.js';
import { rolloutCluster } from '../support/rolloutCluster.js';

describe('zone-by-zone rollouts in the admin views', () => {
  it('mid-rollout: the zone, the batch, what it waits for; then paused by hand: the gauge and the reason', async () => {
    const c = rolloutCluster(fakeClock(Date.now()), { replicas: 9 });
    c.stop();
    c.update('db-r2');
    // zone-a's first batch under way: db-6 made again on db-r2, not Ready yet.
    const db6 = c.pods.get('db-6')!;
    db6.metadata.labels['controller-revision-hash'] = 'db-r2';
    db6.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }];
    c.put(db6);
    const app = testApp(c.store);
    const health = await (await app.adminApp.request('/debug/health')).json() as { workloads: { rollout?: Record<string, unknown>; reason: string }[] };
    assert.deepEqual(health.workloads[0]!.rollout, {
      revision: 'db-r2', zone: 'zone-a', step: 2, batch: 2, replaced: 1, remaining: 8, waitsFor: ['pod db-6 is not Ready'],
    });
    // The reason the page and `zonekeeper audit` print says it too.
    assert.match(health.workloads[0]!.reason, /rolling out db-r2 a zone at a time: 1 replaced, 8 to go; zone zone-a, batch 2 of 2 pods; waits for pod db-6 is not Ready/);
    let metrics = await app.metrics.registry.metrics();
    assert.match(metrics, /zonekeeper_rollout_pods_remaining\{namespace="default",kind="StatefulSet",name="db"\} 8/);
    assert.match(metrics, /zonekeeper_rollout_paused\{namespace="default",kind="StatefulSet",name="db"\} 0/);

    c.annotate('zonekeeper.io/zone-rollout-paused', 'until Monday');
    app.layoutHealth.flush();
    const rollouts = await (await app.adminApp.request('/debug/rollouts')).json() as { enabled: boolean; workloads: { workload: string; rollout: { paused: string } }[] };
    assert.equal(rollouts.enabled, false, 'no controller in this replica');
    assert.equal(rollouts.workloads[0]!.workload, 'default/StatefulSet/db');
    assert.equal(rollouts.workloads[0]!.rollout.paused, 'paused by hand (zonekeeper.io/zone-rollout-paused: "until Monday")');
    metrics = await app.metrics.registry.metrics();
    assert.match(metrics, /zonekeeper_rollout_paused\{namespace="default",kind="StatefulSet",name="db"\} 1/);
    const paused = await (await app.adminApp.request('/debug/health')).json() as { workloads: { reason: string }[] };
    assert.match(paused.workloads[0]!.reason, /; paused: paused by hand \(zonekeeper\.io\/zone-rollout-paused: "until Monday"\)/);
  });

  it('no series and no record once every pod is on the update revision', async () => {
    const c = rolloutCluster(fakeClock(Date.now()), { replicas: 3 });
    c.stop();
    const app = testApp(c.store);
    const health = await (await app.adminApp.request('/debug/health')).json() as { workloads: { rollout?: unknown }[] };
    assert.equal(health.workloads[0]!.rollout, undefined);
    assert.doesNotMatch(await app.metrics.registry.metrics(), /zonekeeper_rollout_paused\{/);
  });
});
