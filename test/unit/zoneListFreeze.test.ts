// The zone-list freeze's queue (src/actuator/actuator.ts) on fake time against an API in memory:
// a refused write is tried again by the queue alone after its backoff step, writing the list the
// latest placement derived; a workload gone is dropped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { slimWorkload } from '../../src/cluster/convert.js';
import { fakeClock } from '../../src/common/clock.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { statefulSet } from '../support/builders.js';
import { recordingApi } from '../support/recordingApi.js';

const PATH = '/apis/apps/v1/namespaces/default/statefulsets/db';

function freezer(patchStatuses: number[], getStatus = 200) {
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  const sts = statefulSet('db', 3);
  const raw = { ...sts, metadata: { ...sts.metadata, resourceVersion: '7' } };
  const api = recordingApi((r) => (r.method === 'GET' ? { status: getStatus, body: raw } : { status: patchStatuses.shift() ?? 200, body: raw }));
  const actuator = kubeActuator(api, silent, createMetrics(), 2000, clock);
  const written = () => api.requests.filter((r) => r.method === 'PATCH' && r.path === PATH).map((r) => r.body.metadata.annotations['zonekeeper.io/zones']);
  return { clock, actuator, w: slimWorkload('StatefulSet', raw), written, api };
}

describe('zone-list freezes on their queue (fake time)', () => {
  it('a refused write is tried again by the queue, 100 ms then 200 ms, with the list the latest placement asked for; not read as frozen meanwhile', async () => {
    const { clock, actuator, w, written } = freezer([403, 403]);
    actuator.freezeZones(w, ['zone-a', 'zone-b', 'zone-c']);
    await clock.advance(0);
    await actuator.settle();
    assert.deepEqual(written(), ['zone-a,zone-b,zone-c']);
    assert.equal(actuator.pendingFreezes.get('default/StatefulSet/db'), undefined, 'refused: the derived list is read meanwhile');
    actuator.freezeZones(w, ['zone-b', 'zone-c', 'zone-a']);
    await clock.advance(99);
    assert.equal(written().length, 1, 'a placement does not try it sooner');
    await clock.advance(1);
    await clock.advance(200);
    await actuator.settle();
    assert.deepEqual(written(), ['zone-a,zone-b,zone-c', 'zone-b,zone-c,zone-a', 'zone-b,zone-c,zone-a']);
    assert.deepEqual(actuator.pendingFreezes.get('default/StatefulSet/db'), { namespace: 'default', kind: 'StatefulSet', name: 'db', zones: ['zone-b', 'zone-c', 'zone-a'] }, 'written: read as frozen until the watch shows it');
    await clock.advance(3_600_000);
    assert.equal(written().length, 3, 'nothing more once written');
  });

  it('a workload gone (404) is dropped, not retried', async () => {
    const { clock, actuator, w, api } = freezer([], 404);
    actuator.freezeZones(w, ['zone-a', 'zone-b', 'zone-c']);
    await clock.advance(0);
    await actuator.settle();
    await clock.advance(3_600_000);
    assert.equal(api.requests.length, 1, 'one GET, then nothing');
  });
});
