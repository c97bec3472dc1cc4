import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deletionCostController } from '../../src/actuator/deletionCosts.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { createMetrics } from '../../src/metrics.js';
import { deployment, nodes, rsPod } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { defaultSettings } from '../support/placement.js';
import { waitFor } from '../support/wait.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const SPOTS = ['node-a-1', 'node-a-2', 'node-b-1', 'node-b-2', 'node-c-1', 'node-c-2'];

describe('deletion-cost controller against a list/watch server', () => {
  let api: FakeApiServer;
  const start = (patchesPerSecond = 1000) => {
    const client = api.client();
    const cache = watchCache(client, { pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 30, backoffInitialMs: 20, backoffMaxMs: 100, crdRecheckSeconds: 60, maxStalenessSeconds: 60 }, silent);
    const controller = deletionCostController(client, cache, defaultSettings(), { intervalSeconds: 60, patchesPerSecond }, silent, createMetrics());
    return { cache, controller };
  };
  const costOf = (pod: string) => api.patches.filter((p) => p.path.endsWith(`/pods/${pod}`)).map((p) => p.body.metadata.annotations['controller.kubernetes.io/pod-deletion-cost']).pop();

  before(async () => {
    api = await new FakeApiServer().start();
    for (const n of nodes(ZONES, 2)) api.put(n);
    for (const o of deployment('web', 6, { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' })) api.put(o);
    for (const o of deployment('plain', 2)) api.put(o);
    SPOTS.forEach((n, i) => {
      const p = rsPod('web', `p${i}`, { nodeName: n });
      p.metadata.creationTimestamp = `2026-11-21T07:00:0${i}Z`;
      api.put(p);
    });
    api.put(rsPod('plain', 'x', { nodeName: 'node-a-1' }));
  });
  after(() => api.stop());

  it('writes costs so that the cheapest three leave one pod per zone, paced, and never touches unmanaged pods', async () => {
    const { cache, controller } = start(10);
    cache.start();
    await waitFor(() => cache.synced(), 'sync');
    const began = Date.now();
    controller.start();
    assert.equal(controller.reconcile(new Set(['default/Deployment/plain'])), 0, 'a reconcile of one workload touches no other');
    assert.equal(controller.reconcile(), 6);
    assert.equal(controller.reconcile(), 0, 'queued once, whatever asks again before the watch shows the costs');
    await controller.settle();
    assert.ok(Date.now() - began >= 450, `6 patches at 10/s took ${Date.now() - began} ms`);
    const costs = SPOTS.map((_, i) => Number(costOf(`web-rs-p${i}`)));
    assert.deepEqual([...costs].sort(), [0, 1, 2, 3, 4, 5]);
    const kept = SPOTS.filter((_, i) => costs[i]! >= 3).map((n) => n.slice(5, 6));
    assert.deepEqual(kept.sort(), ['a', 'b', 'c']);
    assert.equal(costOf('plain-rs-x'), undefined, 'unmanaged pods are never patched');
    await waitFor(() => cache.snapshot.pod('default', 'web-rs-p0')?.deletionCost !== undefined, 'costs watched back');
    assert.equal(controller.reconcile(), 0, 'nothing left to write');
    await controller.stop();
    await cache.stop();
  });

  it('after a restart it writes nothing when the costs are already right', async () => {
    const before = api.patches.length;
    const { cache, controller } = start();
    cache.start();
    await waitFor(() => cache.synced(), 'sync');
    controller.start();
    assert.equal(controller.reconcile(), 0);
    await controller.settle();
    assert.equal(api.patches.length, before);
    await controller.stop();
    await cache.stop();
  });
});
