import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SnapshotSource } from '../../src/cluster/source.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { fakeClock } from '../../src/common/clock.js';
import { workloadSpreadStatusController } from '../../src/controllers/workloadSpreadStatus.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { rfc3339 } from '../../src/placement/policies/workloadSpread/status.js';
import { silent } from '../support/app.js';
import { deployment, nodes, rsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { defaultSettings } from '../support/placement.js';
import { waitFor } from '../support/wait.js';

// The standalone WorkloadSpread controller over HTTP (docs/design.md#workloadspread): its status
// through the status subresource as a JSON merge patch, read back by the watch, and only then
// the evictions of the pods left unscheduled in an Adaptive subset.

const T0 = Date.parse('2026-11-26T08:00:00Z');
const unscheduled = (suffix: string, subset: string): Raw => ({
  ...rsPod('web', suffix, { annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'web-ws', subset }) }, createdAt: rfc3339(T0) }),
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
});

describe('WorkloadSpread status and Adaptive rescheduling against an API server', () => {
  let api: FakeApiServer;
  let cache: SnapshotSource;
  before(async () => {
    api = await new FakeApiServer().start();
    api.crdServed = true;
    for (const o of [...nodes(['zone-a', 'zone-b'], 1), ...deployment('web', 3), unscheduled('p0', 'a'), unscheduled('p1', 'a'),
      rsPod('web', 'b0', { nodeName: 'node-b-1' })]) api.put(o);
    // A status written before: an entry in creatingPods that no longer holds, and a subset since renamed.
    api.put({
      ...workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-x', 2), zoneSubset('b', 'zone-b')],
        { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 5 } }),
      status: { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { 'web-rs-gone': '2026-11-26T07:00:00Z' } }, { name: 'old', replicas: 4, missingReplicas: -1 }] },
    });
    cache = watchCache(api.client(), {
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 60, backoffInitialMs: 20, backoffMaxMs: 200, crdRecheckSeconds: 0.3, maxStalenessSeconds: 60,
    }, silent, () => {});
    cache.start();
    await waitFor(() => cache.synced() && [...cache.snapshot.workloadSpreads('default')].length === 1, 'WorkloadSpread cached');
  });
  after(async () => {
    await cache.stop();
    await api.stop();
  });

  it("writes Kruise's status (the list replaced whole), then evicts the two pods once the watch shows subset a unschedulable", async () => {
    const clock = fakeClock(T0 + 60_000);
    const controller = workloadSpreadStatusController(api.client(), cache, defaultSettings(), new Reservations(30, clock), { record: () => {} },
      { intervalSeconds: 1, patchesApplied: true, rescheduleEvictionsPerMinute: 60, rescheduleDryRun: false }, silent, createMetrics(), {}, clock);
    controller.start();
    try {
      await waitFor(async () => {
        await clock.advance(100);
        return api.requests.filter((r) => r.endsWith('/eviction')).length === 2;
      }, 'both pods evicted');
      const status = api.get('WorkloadSpread', 'default', 'web-ws')!.status;
      assert.deepEqual(status, {
        observedGeneration: 0,
        subsetStatuses: [
          { name: 'a', replicas: 2, conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', lastTransitionTime: '2026-11-26T08:01:00Z' }], missingReplicas: 0 },
          { name: 'b', replicas: 1, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', lastTransitionTime: '2026-11-26T08:01:00Z' }], missingReplicas: -1 },
        ],
      }, 'the old creatingPods entry and subset are gone: the list is replaced, not merged');
      const firstEviction = api.requests.findIndex((r) => r.endsWith('/eviction'));
      const statusWrite = api.requests.findIndex((r) => r.startsWith('PATCH') && r.includes('/workloadspreads/web-ws/status'));
      assert.ok(statusWrite >= 0 && statusWrite < firstEviction, 'the mark is written before any pod goes');
      assert.equal(api.get('Pod', 'default', 'web-rs-p0'), undefined);
      assert.ok(api.get('Pod', 'default', 'web-rs-b0'), 'the last subset\'s pod stays');
    } finally {
      await controller.stop();
    }
  });
});
