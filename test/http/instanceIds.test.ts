import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployment, nodes, rsPod, storeOf, type Raw } from '../support/builders.js';
import { testApp } from '../support/app.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const names = ZONES.map((z) => `node-${z.slice(5)}-1`);
const request = (pod: Raw) => ({ Pod: pod, NodeNames: names });

describe('instance IDs through /filter', () => {
  it('the first filter assigns IDs 0..5 in order, pins a,b,c,a,b,c, and annotates the Deployment and the pods', async () => {
    const pods = Array.from({ length: 6 }, (_, i) => rsPod('web', `p${i}`));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 6, { 'zonekeeper.io/instance-ids': 'true' }), ...pods]);
    const app = testApp(store);
    const placed: string[] = [];
    for (const p of pods) placed.push((await (await app.post('/filter', request(p))).json()).NodeNames.join());
    assert.deepEqual(placed, ['node-a-1', 'node-b-1', 'node-c-1', 'node-a-1', 'node-b-1', 'node-c-1']);
    // The map is on the Deployment, so a rollout's second ReplicaSet sees the IDs the first one holds.
    const deploy = store.workload('Deployment', 'default', 'web')!;
    assert.deepEqual(JSON.parse(deploy.annotations['zonekeeper.io/instance-assignment']!), Object.fromEntries(pods.map((p, i) => [String(i), p.metadata.name])));
    assert.equal(store.workload('ReplicaSet', 'default', 'web-rs')!.annotations['zonekeeper.io/instance-assignment'], undefined);
    assert.equal(store.pod('default', 'web-rs-p4')!.instanceId, 4);
    // Prioritize right after, with the scheduler's stale copy of the pod, knows the ID too.
    const scores = await (await app.post('/prioritize', request(pods[4]!))).json();
    assert.deepEqual(scores.map((s: { Host: string }) => s.Host), ['node-b-1'], 'only the pinned zone scores');
    const layout = await (await app.adminApp.request('/debug/workloads/default/deployment/web')).json() as any;
    assert.equal(layout.policy, 'zone-pin');
    assert.equal(Object.keys(layout.instanceIds.assignment).length, 6);
    assert.deepEqual(layout.sequence, ['zone-a', 'zone-b', 'zone-c', 'zone-a', 'zone-b', 'zone-c']);
  });

  it('an assignment that cannot be made is a reason on every node, not a crash', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 1, { 'zonekeeper.io/instance-ids': 'true' }), rsPod('web', 'a'), rsPod('web', 'b')]);
    const app = testApp(store);
    await app.post('/filter', request(rsPod('web', 'a')));
    const body = await (await app.post('/filter', request(rsPod('web', 'b')))).json();
    assert.deepEqual(body.NodeNames, []);
    assert.match(body.FailedNodes['node-a-1'], /all 1 instance IDs are held by live pods/);
  });
});

describe('zone preferences through the protocol', () => {
  it('shows preferences and plan on /debug/workloads; an invalid annotation is logged, counted once and falls back', async () => {
    const good = storeOf([...nodes(ZONES, 1), ...deployment('web', 8, { 'zonekeeper.io/zone-preferences': '{"zones":{"zone-a":{"weight":2},"zone-b":{"weight":1},"zone-c":{"weight":1}}}' })]);
    const layout = await (await testApp(good).adminApp.request('/debug/workloads/default/deployment/web')).json() as any;
    assert.equal(layout.policy, 'zone-balance');
    assert.deepEqual(layout.federatedPlan, { 'zone-a': 4, 'zone-b': 2, 'zone-c': 2 });
    assert.equal(layout.preferences.source, 'annotation');

    const bad = storeOf([...nodes(ZONES, 1), ...deployment('web', 3, { 'zonekeeper.io/zone-preferences': '{"zones": 7}' })]);
    const app = testApp(bad);
    for (let i = 0; i < 3; i++) assert.equal((await app.post('/filter', request(rsPod('web', `p${i}`)))).status, 200);
    assert.match(await app.metrics.registry.metrics(), /zonekeeper_invalid_zone_preferences_total\{namespace="default",workload="Deployment\/web"\} 1/);
    const badLayout = await (await app.adminApp.request('/debug/workloads/default/deployment/web')).json() as any;
    assert.match(badLayout.preferences.error, /zones/);
    assert.deepEqual(badLayout.federatedPlan, { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 });
  });
});
