import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AssignmentError, instanceIdWriter } from '../../src/actuator/instanceIdWriter.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { deployment, rsPod } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime, waitFor } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

describe('instance ID writes against a list/watch server with optimistic concurrency', () => {
  let api: FakeApiServer;
  // The writers read the deadline of their claims and their backoff from fake time, moved while a test waits on them.
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  const writer = () => instanceIdWriter(api.client(), silent, createMetrics(), 5000, clock);
  const owner = { kind: 'ReplicaSet' as const, namespace: 'default', name: 'web-rs' };
  const rsAnnotation = async () => JSON.parse((await (await fetch(`http://127.0.0.1:${api.port}/apis/apps/v1/namespaces/default/replicasets/web-rs`, { headers: { authorization: 'Bearer test-token' } })).json() as any).metadata.annotations['zonekeeper.io/instance-assignment']);
  const podId = async (name: string) => (await (await fetch(`http://127.0.0.1:${api.port}/api/v1/namespaces/default/pods/${name}`, { headers: { authorization: 'Bearer test-token' } })).json() as any).metadata.annotations?.['zonekeeper.io/instance-id'];

  before(async () => {
    api = await new FakeApiServer().start();
    for (const o of deployment('web', 10)) api.put(o);
    for (let i = 0; i < 11; i++) api.put(rsPod('web', `p${i}`));
  });
  after(() => api.stop());

  it('two zonekeepers assigning 10 pods at once: unique IDs 0..9, no update lost, pods annotated', async () => {
    api.holdPatches();
    const [a, b] = [writer(), writer()];
    const live = () => true;
    const assigned = Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).assign({ owner, pod: `web-rs-p${i}`, replicas: 10, live })));
    await waitFor(() => api.patchesHeld() >= 2, 'a claim from each writer sent before either is answered');
    api.releasePatches();
    let ids: number[] | undefined;
    void assigned.then((got) => { ids = got; });
    await onFakeTime(clock, () => ids !== undefined, 'every pod assigned', 4_000, 5);
    ids = ids!;
    assert.deepEqual([...ids].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.ok(api.conflicts > 0, 'the two writers did collide');
    const map = await rsAnnotation();
    assert.equal(Object.keys(map).length, 10);
    for (let i = 0; i < 10; i++) {
      assert.equal(map[String(ids[i])], `web-rs-p${i}`);
      assert.equal(await podId(`web-rs-p${i}`), String(ids[i]));
    }
    assert.equal(await a.assign({ owner, pod: 'web-rs-p3', replicas: 10, live }), ids[3], 'a pod keeps its ID');
  });

  it('a pod that replaces a deleted one takes its freed ID; a pod the cache misses but the API has keeps its ID', async () => {
    const w = writer();
    const map = await rsAnnotation();
    const freed = Number(Object.entries(map).find(([, p]) => p === 'web-rs-p7')![0]);
    api.delete(rsPod('web', 'p7'));
    // The cache knows nothing of p0..p9: only the API server's word frees an ID.
    const id = await w.assign({ owner, pod: 'web-rs-p10', replicas: 10, live: () => false });
    assert.equal(id, freed);
    await assert.rejects(w.assign({ owner, pod: 'web-rs-extra', replicas: 10, live: () => false }), /all 10 instance IDs are held by live pods/);
  });

  it('fails clearly before the annotations reach 256 KiB', async () => {
    const [deploy, rs] = deployment('big', 5);
    rs!.metadata.name = 'big-rs';
    rs!.metadata.annotations = { filler: 'x'.repeat(256 * 1024 - 200) };
    api.put(deploy!);
    api.put(rs!);
    api.put(rsPod('big', 'p0'));
    await assert.rejects(writer().assign({ owner: { ...owner, name: 'big-rs' }, pod: 'big-rs-p0', replicas: 5, live: () => true }),
      (e: Error) => e instanceof AssignmentError && /256 KiB/.test(e.message));
  });
});
