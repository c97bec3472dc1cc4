import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { deletionCostController } from '../../src/controllers/deletionCosts.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { createMetrics } from '../../src/metrics/metrics.js';
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
    const cache = watchCache(client, { pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 30, backoffInitialMs: 20, backoffMaxMs: 100,
      crdRecheckSeconds: 60, maxStalenessSeconds: 60, clock: fakeClock(Date.parse('2026-11-25T00:00:00Z')) }, silent);
    // The controller's time is fake (pacing, the resync), moved by the test; the watch's is another fake clock that never moves.
    const clock = fakeClock(Date.parse('2026-11-25T00:00:00Z'));
    const controller = deletionCostController(client, cache, defaultSettings(), { intervalSeconds: 60, patchesPerSecond }, silent, createMetrics(), {}, clock);
    return { cache, controller, clock };
  };
  const costPatches = () => api.patches.filter((p) => p.path.includes('/pods/')).length;
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
    const { cache, controller, clock } = start(10);
    cache.start();
    await waitFor(() => cache.synced(), 'sync');
    controller.start();
    // 10 a second: one patch now, then one more for each 100 ms of (fake) time, never two.
    for (let n = 1; n <= 6; n++) {
      await waitFor(() => costPatches() >= n, `patch ${n}`);
      assert.equal(costPatches(), n, `after ${(n - 1) * 100} ms at 10/s`);
      await clock.advance(100);
    }
    await controller.idle();
    assert.equal(costPatches(), 6, 'each managed pod written once');
    const costs = SPOTS.map((_, i) => Number(costOf(`web-rs-p${i}`)));
    assert.deepEqual([...costs].sort(), [0, 1, 2, 3, 4, 5]);
    const kept = SPOTS.filter((_, i) => costs[i]! >= 3).map((n) => n.slice(5, 6));
    assert.deepEqual(kept.sort(), ['a', 'b', 'c']);
    assert.equal(costOf('plain-rs-x'), undefined, 'unmanaged pods are never patched');
    await waitFor(() => SPOTS.every((_, i) => cache.snapshot.pod('default', `web-rs-p${i}`)?.deletionCost !== undefined), 'costs watched back');
    // The pod events of the watch, and the next resync, find nothing left to write.
    await clock.advance(60_000);
    await controller.idle();
    assert.equal(costPatches(), 6, 'nothing left to write');
    await controller.stop();
    await cache.stop();
  });

  it('after a restart it writes nothing when the costs are already right', async () => {
    const before = api.patches.length;
    const { cache, controller } = start();
    cache.start();
    await waitFor(() => cache.synced(), 'sync');
    controller.start();
    await controller.idle();
    assert.equal(api.patches.length, before);
    await controller.stop();
    await cache.stop();
  });
});
