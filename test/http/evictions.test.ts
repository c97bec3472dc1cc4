// The eviction gate's webhook (src/eviction/) over the real routes and decision service, on an
// in-memory cluster; and its record written conditionally on the API server's resourceVersion.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { admissionRoutes } from '../../src/admission/routes.js';
import { memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { evictionRoute } from '../../src/eviction/routes.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent, testApp } from '../support/app.js';
import { nodes, statefulSet, stsPod, storeOf, type Raw } from '../support/builders.js';
import { recordingApi } from '../support/recordingApi.js';
import { trustedCaller } from '../../src/http/callers.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const OPTED = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': 'zone' };
const six = (down: readonly number[] = []) => Array.from({ length: 6 }, (_, i) => stsPod('web', i, { nodeName: `node-${ZONES[i % 3]!.slice(5)}-1`, ready: !down.includes(i) }));

const review = (pod: string, extra: Raw = {}) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: `rev-${pod}`, kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction', operation: 'CREATE', name: pod, namespace: 'default', userInfo: { username: 'system:serviceaccount:kube-system:karpenter' },
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'default' } }, ...extra,
  },
});

function setup(o: { leading?: boolean; annotations?: Record<string, string>; down?: number[] } = {}) {
  const store = storeOf([...nodes(ZONES, 1), statefulSet('web', 6, { annotations: o.annotations ?? OPTED }), ...six(o.down)]);
  const app = testApp(store);
  const deps = { service: app.service, leading: () => o.leading ?? true, gateEnabled: false, caller: trustedCaller, applySubsetPatches: false, log: silent };
  const eviction = evictionRoute({ service: app.service, leading: () => o.leading ?? true, caller: trustedCaller, log: silent }, app.metrics, 1 << 20);
  const routes = admissionRoutes(deps, app.metrics, silent, 1 << 20, [eviction]);
  const post = async (body: unknown) => {
    const res = await routes.request('/admission/evictions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, json: await res.json() as Raw };
  };
  return { store, app, post };
}

describe('the eviction gate webhook', () => {
  it('allows a zone, records the approval on the workload, and answers the next zone 429 TooManyRequests naming what it waits for', async () => {
    const { store, post, app } = setup();
    const first = await post(review('web-0'));
    assert.equal(first.status, 200);
    assert.deepEqual(first.json.response, { uid: 'rev-web-0', allowed: true });
    const recorded = JSON.parse(store.workload('StatefulSet', 'default', 'web')!.annotations['zonekeeper.io/disruption-approvals']!);
    assert.deepEqual(recorded.map((a: Raw) => [a.pod, a.zone]), [['web-0', 'zone-a']]);
    const second = await post(review('web-1'));
    assert.equal(second.json.response.allowed, false);
    assert.equal(second.json.response.status.code, 429);
    assert.equal(second.json.response.status.reason, 'TooManyRequests');
    assert.match(second.json.response.status.message, /^zone disruption budget of StatefulSet default\/web: zone-a is under disruption; pod web-1 of zone-b may go once every seat outside it is available: waits for pod web-0 is being evicted \(zone-a\)$/);
    assert.equal((await post(review('web-3'))).json.response.allowed, true, 'zone-a again: within its budget');
    const metrics = await app.metrics.registry.getSingleMetricAsString('zonekeeper_evictions_total');
    assert.match(metrics, /asker="api",outcome="allowed"} 2/);
    assert.match(metrics, /asker="api",outcome="refused"} 1/);
    assert.match(metrics, /asker="zonekeeper",outcome="allowed"} 0/, 'the webhook\'s are counted under api');
    // The decision is kept for /debug/decisions, with the long reason, and /debug/explain shows the last one and the zones down.
    assert.equal(app.service.views.decisionsFor('default/web-1')[0]?.outcome, 'refused');
    const explained = await (await app.adminApp.request('/debug/explain?pod=default/web-1')).json() as Raw;
    assert.equal(explained.disruption.budget, 'zone');
    assert.equal(explained.disruption.approvals, 2);
    assert.equal(explained.disruption.lastEviction.outcome, 'refused');
    assert.match(explained.disruption.lastEviction.summary, /waits for pod web-0 is being evicted/);
  });

  it('two evictions in two zones at the same instant: one passes', async () => {
    const { post } = setup();
    const answers = await Promise.all([post(review('web-0')), post(review('web-1')), post(review('web-2'))]);
    assert.deepEqual(answers.map((a) => a.json.response.allowed), [true, false, false]);
  });

  it('a dry run is judged and records nothing; a replica without the Lease refuses with 429; an unmanaged pod passes', async () => {
    const dry = setup();
    assert.equal((await dry.post(review('web-0', { dryRun: true }))).json.response.allowed, true);
    assert.equal(dry.store.workload('StatefulSet', 'default', 'web')!.annotations['zonekeeper.io/disruption-approvals'], undefined);
    const follower = setup({ leading: false });
    const refused = (await follower.post(review('web-0'))).json.response;
    assert.equal(refused.status.code, 429);
    assert.match(refused.status.message, /does not hold the Lease/);
    const plain = setup({ annotations: { 'zonekeeper.io/zones': ZONES.join(',') } });
    assert.equal((await plain.post(review('web-0'))).json.response.allowed, true);
    assert.equal((await plain.post(review('web-1'))).json.response.allowed, true, 'no budget: two zones, as before');
    assert.equal((await plain.post(review('nobody'))).json.response.allowed, true);
    // A pod whose workload is not in the cache yet: whether it is opted in cannot be told, so it waits.
    const orphan = setup();
    orphan.store.upsert('pods', { ...orphan.store.pod('default', 'web-0')!, owner: { kind: 'StatefulSet', name: 'later', uid: 'x', apiVersion: 'apps/v1' } } as never);
    const waits = (await orphan.post(review('web-0'))).json.response;
    assert.equal(waits.status?.code, 429, JSON.stringify(waits));
    assert.match(waits.status.message, /StatefulSet default\/later is not in the cache yet; retry the eviction/);
  });

  it('a bad budget value refuses, naming the annotation and the value', async () => {
    const { post } = setup({ annotations: { ...OPTED, 'zonekeeper.io/zone-disruption-budget': 'half' } });
    assert.match((await post(review('web-0'))).json.response.status.message, /zonekeeper\.io\/zone-disruption-budget: "half" is not "zone", a count/);
  });

  it('a rollback during an outage: web-0 (zone-a) and web-1 (zone-b) not Ready; web-0 waits by default, goes under AlwaysAllow, and a bad value refuses', async () => {
    const refused = (await setup({ down: [0, 1] }).post(review('web-0'))).json.response;
    assert.equal(refused.status.code, 429);
    assert.match(refused.status.message, /waits for pod web-1 is not Ready \(zone-b\); web-0 is down already: with zonekeeper\.io\/unhealthy-pod-eviction-policy: AlwaysAllow it would go now$/);
    const always = setup({ down: [0, 1], annotations: { ...OPTED, 'zonekeeper.io/unhealthy-pod-eviction-policy': 'AlwaysAllow' } });
    assert.deepEqual((await always.post(review('web-0'))).json.response, { uid: 'rev-web-0', allowed: true });
    assert.equal((await always.post(review('web-3'))).json.response.status.code, 429, 'an available pod of zone-a still waits for zone-b');
    const bad = setup({ down: [0, 1], annotations: { ...OPTED, 'zonekeeper.io/unhealthy-pod-eviction-policy': 'Always' } });
    assert.match((await bad.post(review('web-2'))).json.response.status.message, /unhealthy-pod-eviction-policy: "Always" is not IfHealthyBudget or AlwaysAllow/);
  });

  it('bad input: another resource, another operation, no name, malformed JSON, a huge body: 4xx naming it, and it keeps serving', async () => {
    const { post } = setup();
    const pods = await post(review('web-0', { resource: { group: '', version: 'v1', resource: 'pods' }, subResource: undefined }));
    assert.equal(pods.status, 400);
    assert.match(JSON.stringify(pods.json), /this webhook reviews pods\/eviction, not core\/pods/);
    assert.equal((await post(review('web-0', { operation: 'DELETE' }))).status, 400);
    assert.match(JSON.stringify((await post(review('', {}))).json), /an eviction names its pod and namespace/);
    assert.equal((await post('{not json')).status, 400);
    assert.equal((await post(JSON.stringify(review('web-0')).padEnd(2 << 20, ' '))).status, 413);
    assert.equal((await post(review('web-0'))).json.response.allowed, true);
  });
});

describe('the approval is a conditional write', () => {
  it('a 409 (another replica recorded first) reads the record again and judges again: the second zone is refused', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('web', 6, { annotations: OPTED }), ...six()]);
    const theirs = JSON.stringify([{ pod: 'web-1', uid: 'pod-web-1', zone: 'zone-b', at: '2026-11-21T00:00:00.000Z' }]);
    let gets = 0;
    const api = recordingApi((r) => {
      if (r.method === 'GET') return { status: 200, body: { metadata: { resourceVersion: String(++gets), annotations: gets > 1 ? { 'zonekeeper.io/disruption-approvals': theirs } : {} } } };
      return { status: 409, body: { message: 'the object has been modified' } };
    });
    const metrics = createMetrics();
    const clock = fakeClock(Date.parse('2026-11-21T00:00:05Z'));
    const service = decisionService({ source: memorySource(store, 'test'), actuator: kubeActuator(api, silent, metrics, 2000, clock), metrics, log: silent, config: parseConfig({}), clock });
    const answer = await service.eviction({ namespace: 'default', name: 'web-0', dryRun: false, leading: true, asker: 'zonekeeper' });
    assert.equal(answer.allowed, false);
    assert.match(answer.why, /zone-b is under disruption/);
    const patches = api.requests.filter((r) => r.method === 'PATCH');
    assert.equal(patches.length, 1);
    assert.equal(patches[0]!.body.metadata.resourceVersion, '1', 'the write carried the resourceVersion it was judged from');
    assert.match(await metrics.registry.getSingleMetricAsString('zonekeeper_evictions_total'), /asker="zonekeeper",outcome="refused"} 1/, 'asked in process: counted under zonekeeper');
  });
});
