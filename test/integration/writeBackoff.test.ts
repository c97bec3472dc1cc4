// A write the API server refuses backs off per workload: filters keep being answered from the
// cache while it is in flight, and the refused workload costs one attempt per backoff step, not
// a GET and a PATCH per filter: never decided blind, and a refused write never blocks a decision
// (docs/design.md#failure-modes). Against a list/watch server on 127.0.0.1;
// the backoff runs on fake time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { createExtender, type ExtenderService } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { deployment, nodes, pod, statefulSet, stsPod } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { waitFor } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

describe('failed writes back off per workload', () => {
  let api: FakeApiServer;
  let extender: ExtenderService;
  let actuator: ReturnType<typeof kubeActuator>;
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  let stop: () => Promise<void>;
  before(async () => {
    api = await new FakeApiServer().start();
    for (const n of nodes(ZONES, 1)) api.put(n);
    api.put(statefulSet('db', 3));
    api.put(statefulSet('busy', 3));
    for (const o of deployment('web', 3, { 'zonekeeper.io/instance-ids': 'true' })) api.put(o);
    const client = api.client();
    const cache = watchCache(client, { pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 30, backoffInitialMs: 20, backoffMaxMs: 200,
      crdRecheckSeconds: 60, maxStalenessSeconds: 5, clock: fakeClock(Date.parse('2026-11-25T12:00:00Z')) }, silent);
    cache.start();
    await waitFor(() => cache.ready(), 'sync');
    const metrics = createMetrics();
    actuator = kubeActuator(client, silent, metrics, 500, clock);
    const config = parseConfig({});
    extender = createExtender(decisionService({ source: cache, actuator, metrics, log: silent, config, clock }), { source: cache, log: silent, config });
    stop = () => cache.stop();
  });
  after(async () => {
    await stop();
    await api.stop();
  });

  const names = ['node-a-1', 'node-b-1', 'node-c-1'];
  /** Requests the fake API server saw for a path (GET and PATCH). */
  const touching = (path: string) => api.requests.filter((r) => r.startsWith('GET ' + path) || r.startsWith('PATCH ' + path)).length;

  it('a zone-list freeze refused with 403: the filter answers while the write is in flight; 2.5 s of filters cost 5 attempts (the queue\'s backoff: at 0, 0.1, 0.3, 0.7 and 1.5 s)', async () => {
    const path = '/apis/apps/v1/namespaces/default/statefulsets/db';
    const isFreeze = (m: string, p: string) => m === 'PATCH' && p.endsWith('/statefulsets/db');
    let release!: () => void;
    api.faults.push({ match: isFreeze, status: 403, remaining: 1, held: new Promise<void>((r) => { release = r; }) });
    api.faults.push({ match: isFreeze, status: 403, remaining: Number.MAX_SAFE_INTEGER });
    const before = touching(path);
    // The first filter asks for the freeze; its PATCH is held by the API server, and the pin is answered all the same.
    const first = JSON.parse(await extender.filter({ Pod: stsPod('db', 1), NodeNames: names }));
    assert.deepEqual(first.NodeNames, ['node-b-1']);
    await waitFor(() => api.requests.some((r) => r.startsWith(`PATCH ${path}`)), 'the freeze is in flight');
    release();
    await actuator.settle();
    let filters = 1;
    for (; filters < 250; filters++) {
      await clock.advance(10);
      const answer = JSON.parse(await extender.filter({ Pod: stsPod('db', 1), NodeNames: names }));
      assert.deepEqual(answer.NodeNames, ['node-b-1'], 'pinned from the derived list while the freeze fails');
      await actuator.settle();
    }
    const attempts = (touching(path) - before) / 2;
    assert.equal(attempts, 5, `${attempts} attempts in 2.5 s of ${filters} filters: at 0 s, then after 100 ms doubling; the next at 3.1 s`);
  });

  it('a zone-list freeze that keeps losing races (409) is tried again by the queue alone, after 100 ms then 200 ms', async () => {
    const path = '/apis/apps/v1/namespaces/default/statefulsets/busy';
    api.faults.push({ match: (m, p) => m === 'PATCH' && p === path, status: 409, remaining: 10 });
    const answer = JSON.parse(await extender.filter({ Pod: stsPod('busy', 0), NodeNames: names }));
    assert.deepEqual(answer.NodeNames, ['node-a-1']);
    const frozen = () => api.get('StatefulSet', 'default', 'busy')?.metadata.annotations?.['zonekeeper.io/zones'];
    const step = async (ms: number) => {
      await clock.advance(ms);
      await actuator.settle();
    };
    await actuator.settle();
    assert.equal(frozen(), undefined, 'five conflicts in a row: not frozen yet');
    await step(99);
    assert.equal(frozen(), undefined, 'not before the queue\'s first retry step');
    await step(1);
    assert.equal(frozen(), undefined, 'the second round of five lost as well');
    await step(199);
    assert.equal(frozen(), undefined, 'the step doubled');
    await step(1);
    assert.equal(frozen(), ZONES.join(','), 'frozen by the retries alone, 300 ms after the first placement');
  });

  it('instance-ID writes refused with 403: the pod is told at once, without a request, until the backoff step ends', async () => {
    api.faults.push({ match: (m, p) => m === 'PATCH' && p.endsWith('/deployments/web'), status: 403, remaining: Number.MAX_SAFE_INTEGER });
    const path = '/apis/apps/v1/namespaces/default/deployments/web';
    const before = touching(path);
    const p = pod('web-rs-x', { kind: 'ReplicaSet', name: 'web-rs' }, { uid: 'web-x' });
    const first = JSON.parse(await extender.filter({ Pod: p, NodeNames: names }));
    assert.match(first.Error || JSON.stringify(first.FailedNodes), /403|injected fault/);
    const second = JSON.parse(await extender.filter({ Pod: p, NodeNames: names }));
    assert.match(second.Error || JSON.stringify(second.FailedNodes), /are failing .*next try in 1s/);
    assert.equal(touching(path) - before, 2, 'one attempt: a GET and the refused PATCH');
  });
});
