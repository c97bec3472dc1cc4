import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { workloadSpreadAdoptionController } from '../../src/controllers/workloadSpreadAdoption.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { deployment, nodes, rsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { defaultSettings } from '../support/placement.js';
import { waitFor } from '../support/wait.js';

// Kruise's "manage the pods that were created before workloadspread": four pods in zone-a, two of
// them marked for another WorkloadSpread, then a WorkloadSpread zone-a (max 2) / zone-b.
const MATCHED = 'apps.kruise.io/matched-workloadspread';

describe('WorkloadSpread adoption: pods it did not place get Kruise\'s mark', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await new FakeApiServer().start();
    api.crdServed = true;
    for (const n of nodes(['zone-a', 'zone-b'], 2)) api.put(n);
    for (const o of deployment('web', 4)) api.put(o);
    ['p0', 'p1', 'p2', 'p3'].forEach((s, i) => {
      const stale = i < 2 ? { [MATCHED]: '{"name":"fakeWS","subset":"subset-a"}' } : undefined;
      const p = rsPod('web', s, { nodeName: `node-a-${1 + (i % 2)}`, annotations: stale });
      p.metadata.creationTimestamp = `2026-11-21T07:00:0${i}Z`;
      api.put(p);
    });
    // A pod this WorkloadSpread placed already: never written.
    api.put(rsPod('web', 'placed', { nodeName: 'node-b-1', annotations: { [MATCHED]: '{"name":"web-ws","subset":"zone-b"}' } }));
    api.put(workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [
      zoneSubset('zone-a', 'zone-a', 2, { patch: { metadata: { annotations: { subset: 'zone-a' } } } }),
      zoneSubset('zone-b', 'zone-b', undefined, { patch: { metadata: { annotations: { subset: 'zone-b' } } } }),
    ]));
  });
  after(() => api.stop());

  it('marks every running pod without it (or with a stale one) by its node, without the subset\'s patch metadata, conditional on resourceVersion', async () => {
    const client = api.client();
    const cache = watchCache(client, { pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 30, backoffInitialMs: 20, backoffMaxMs: 100,
      crdRecheckSeconds: 60, maxStalenessSeconds: 60 }, silent);
    const clock = fakeClock(Date.parse('2026-11-25T00:00:00Z'));
    const pacing = { intervalSeconds: 60, patchesPerSecond: 1000 };
    const controller = workloadSpreadAdoptionController(client, cache, defaultSettings(), pacing, silent, createMetrics(), {}, clock);
    cache.start();
    await waitFor(() => cache.synced(), 'sync');
    controller.start();
    const podPatches = () => api.patches.filter((p) => p.path.includes('/pods/'));
    // Paced on the fake clock: one patch per millisecond of it.
    for (let n = 1; n <= 4; n++) {
      await waitFor(() => podPatches().length >= n, `mark ${n}`);
      await clock.advance(1);
    }
    await controller.idle();
    const patches = podPatches();
    assert.deepEqual(patches.map((p) => p.path.slice(p.path.lastIndexOf('/') + 1)).sort(), ['web-rs-p0', 'web-rs-p1', 'web-rs-p2', 'web-rs-p3']);
    for (const p of patches) {
      // Kruise files all four under zone-a (the only subset their nodes are in), over its max: the costs then say which go first.
      assert.equal(p.body.metadata.annotations[MATCHED], '{"name":"web-ws","subset":"zone-a"}');
      // Kruise would also write the subset's patch metadata; zonekeeper's account writes only its mark.
      assert.deepEqual(Object.keys(p.body.metadata.annotations), [MATCHED], 'a WorkloadSpread editor\'s metadata is not written with zonekeeper\'s rights');
      assert.match(String(p.body.metadata.resourceVersion), /^\d+$/, 'conditional on the resourceVersion read');
    }
    await waitFor(() => ['p0', 'p1', 'p2', 'p3'].every((s) => cache.snapshot.pod('default', `web-rs-${s}`)?.kruiseMatch?.workloadSpread === 'web-ws'), 'marks watched back');
    await clock.advance(60_000);
    await controller.idle();
    assert.equal(podPatches().length, 4, 'the resync finds nothing left to write');
    await controller.stop();
    await cache.stop();
  });
});
