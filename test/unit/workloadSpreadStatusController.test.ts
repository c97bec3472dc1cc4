// The WorkloadSpread status controller (standalone mode) on fake time: what it writes, that it
// writes it once, and when a key is looked at again (a pod change after the gathering delay, a
// refused write at the next resync). Narrow on purpose: what a status holds is status.ts's test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { workloadSpreadStatusController } from '../../src/controllers/workloadSpreadStatus.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { deployment, nodes, rsPod, storeOf, workloadSpread, zoneSubset } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';
import { recordingApi } from '../support/recordingApi.js';

const PATH = '/apis/apps.kruise.io/v1alpha1/namespaces/default/workloadspreads/web-ws/status';

/** The WorkloadSpread as v1beta1 serves it (the version the cluster stores since Kruise's PR #2466): Adaptive, so its subsets carry a condition. */
function v1beta1Spread() {
  const ws = workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')],
    { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } });
  return { ...ws, apiVersion: 'apps.kruise.io/v1beta1',
    spec: { ...ws.spec, subsets: ws.spec.subsets.map(({ requiredNodeSelectorTerm: term, ...x }: any) => ({ ...x, requiredNodeSelector: term })) } };
}

const v1alpha1Spread = () => workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')]);

function controller(answers: number[] = [], spread = v1alpha1Spread()) {
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  const store = storeOf([...nodes(['zone-a', 'zone-b'], 1), ...deployment('web', 4), rsPod('web', 'p0', { nodeName: 'node-a-1' }), spread]);
  const api = recordingApi(() => ({ status: answers.shift() ?? 200 }));
  const c = workloadSpreadStatusController(api, memorySource(store, 'test'), defaultSettings(), new Reservations(30, clock), { record() {} },
    { intervalSeconds: 60, patchesApplied: true, rescheduleEvictionsPerMinute: 60, rescheduleDryRun: false }, silent, createMetrics(), {}, clock);
  const statuses = (path: string) => api.requests.filter((r) => r.method === 'PATCH' && r.path === path).map((r) => r.body.status);
  const writes = () => api.requests.filter((r) => r.method === 'PATCH' && r.path === PATH).map((r) => r.body.status.subsetStatuses.map((s: any) => [s.name, s.replicas, s.missingReplicas]));
  return { clock, store, c, writes, statuses };
}

describe('WorkloadSpread status controller (fake time)', () => {
  it('writes the status through the status subresource once; the same status is not written again at the resync', async () => {
    const { clock, c, writes } = controller();
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(writes(), [[['a', 1, 1], ['b', 0, -1]]]);
      await clock.advance(180_000);
      assert.equal(writes().length, 1, 'three resyncs, nothing new to write');
    } finally {
      await c.stop();
    }
  });

  it('a v1beta1 WorkloadSpread gets the v1beta1 status at v1beta1\'s path: each subset condition a metav1.Condition', async () => {
    const { clock, c, statuses } = controller([], v1beta1Spread());
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(statuses(PATH), [], 'nothing at v1alpha1');
      const [status] = statuses(PATH.replace('v1alpha1', 'v1beta1'));
      assert.deepEqual(status.subsetStatuses.map((x: any) => [x.name, x.replicas, x.missingReplicas]), [['a', 1, 1], ['b', 0, -1]]);
      assert.deepEqual(status.subsetStatuses[0].conditions,
        [{ type: 'Schedulable', status: 'True', lastTransitionTime: '2026-11-25T12:00:00Z', reason: 'Sufficient', message: '' }]);
    } finally {
      await c.stop();
    }
  });

  it('a pod change is written after the half second that gathers a burst, once for the burst', async () => {
    const { clock, store, c, writes } = controller();
    c.start();
    try {
      await clock.advance(0);
      addObject(store, rsPod('web', 'p1', { nodeName: 'node-a-1' }));
      addObject(store, rsPod('web', 'p2', { nodeName: 'node-b-1' }));
      await clock.advance(499);
      assert.equal(writes().length, 1, 'not before the burst is gathered');
      await clock.advance(1);
      assert.deepEqual(writes(), [[['a', 1, 1], ['b', 0, -1]], [['a', 2, 0], ['b', 1, -1]]]);
    } finally {
      await c.stop();
    }
  });

  it('a refused write is written again at the next resync; stopped, nothing more', async () => {
    const { clock, c, writes } = controller([500]);
    c.start();
    await clock.advance(0);
    assert.equal(writes().length, 1);
    await clock.advance(59_999);
    assert.equal(writes().length, 1);
    await clock.advance(1);
    assert.equal(writes().length, 2, 'the resync wrote it again');
    await c.stop();
    await clock.advance(600_000);
    assert.equal(writes().length, 2);
  });
});
