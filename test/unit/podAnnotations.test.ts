// The pod-annotation controller's two queues on fake time (src/controllers/podAnnotations.ts):
// a workload's values and its other writes (the instance-ID hand-over) on one paced queue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterStore } from '../../src/cluster/store.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { podAnnotationController, type PodAnnotator } from '../../src/controllers/podAnnotations.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { deployment, rsPod } from '../support/builders.js';
import { recordingApi } from '../support/recordingApi.js';
import { writeTimes } from '../support/wait.js';

function controller(patchesPerSecond: number) {
  const clock = fakeClock();
  const store = new ClusterStore();
  for (const o of deployment('web', 3)) addObject(store, o);
  for (let i = 0; i < 3; i++) addObject(store, rsPod('web', `p${i}`));
  const api = recordingApi(() => ({ status: 200 }));
  const wrote: [string, number][] = [];
  const annotator: PodAnnotator = {
    action: 'test', annotation: 'example.com/value',
    current: () => undefined,
    *desired(snapshot, w) {
      if (w.kind !== 'Deployment') return;
      for (let i = 0; i < 3; i++) yield { pod: snapshot.pod('default', `web-rs-p${i}`)!, value: String(i) };
    },
    *otherWrites(_snapshot, w) {
      if (w.kind === 'Deployment') yield { key: 'hand-over:web-rs-p0', write: async () => { wrote.push(['hand-over', clock.now()]); } };
    },
  };
  const c = podAnnotationController(api, memorySource(store, 'test'), annotator, { intervalSeconds: 3600, patchesPerSecond }, silent, createMetrics(), clock);
  const patched = () => api.requests.filter((r) => r.method === 'PATCH').map((r) => r.path.split('/').pop());
  return { clock, c, api, wrote, patched };
}

describe('pod annotations on a paced queue (fake time)', () => {
  it('each write takes its turn as it is queued, 10 a second: the values, then the other writes after them, never two within 100 ms', async () => {
    const { clock, c, wrote, patched } = controller(10);
    c.start();
    try {
      const at = await writeTimes(clock, () => patched().length, 1000, 50);
      assert.deepEqual(patched(), ['web-rs-p0', 'web-rs-p1', 'web-rs-p2'], 'in the order the workload gave them');
      assert.deepEqual(at, [0, 100, 200]);
      assert.deepEqual(wrote, [['hand-over', 300]], 'the hand-over took the next turn');
      await clock.advance(10_000);
      assert.equal(patched().length, 3, 'a value written is not written again before the watch shows it');
    } finally {
      await c.stop();
    }
  });

  it('stop: the writes still waiting for their turn are dropped, none starts after stop resolves', async () => {
    const { clock, c, wrote, patched } = controller(1);
    c.start();
    await clock.advance(0);
    assert.deepEqual(patched(), ['web-rs-p0'], 'the burst of 1');
    await c.stop();
    await clock.advance(10_000);
    assert.deepEqual(patched(), ['web-rs-p0']);
    assert.deepEqual(wrote, []);
  });
});
