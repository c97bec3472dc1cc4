// The eviction gate's webhook (src/eviction/) over the real routes and decision service, on an
// in-memory cluster; and its record written conditionally on the API server's resourceVersion.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { admissionRoutes } from '../../src/admission/admissionRoutes.js';
import { memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { evictionRoute } from '../../src/eviction/evictionRoute.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent, testApp } from '../support/app.js';
import { deployment, node, nodes, pv, pvc, rsPod, statefulSet, stsPod, storeOf, type Raw } from '../support/builders.js';
import { evictPod } from '../../src/controllers/eviction.js';
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

function setup(o: { leading?: boolean; annotations?: Record<string, string>; down?: number[]; objects?: Raw[] } = {}) {
  const store = storeOf(o.objects ?? [...nodes(ZONES, 1), statefulSet('web', 6, { annotations: o.annotations ?? OPTED }), ...six(o.down)]);
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

const approvalsOf = (store: ReturnType<typeof storeOf>, kind: 'StatefulSet' | 'Deployment', name: string) =>
  JSON.parse(store.workload(kind, 'default', name)!.annotations['zonekeeper.io/disruption-approvals'] ?? '[]') as Raw[];
const allowed = async (post: ReturnType<typeof setup>['post'], pod: string) => (await post(review(pod))).json.response as Raw;
const on = (zone: string) => `node-${zone.slice(5)}-1`;

describe('issue 65: zone at a time, hardened (the eviction gate)', () => {
  it('point 1: web-1, seated in zone-b but running in zone-a on its volume, is charged to zone-a once gone: zone-b waits, zone-a may go on', async () => {
    for (const byVolume of [true, false]) {
      // On its volume (a bound claim wins over the pin), or with no volume at all (an adaptive fallback, an adopted layout): its approval says zone-a.
      const pods = six().map((p) => (p.metadata.name === 'web-1' ? stsPod('web', 1, { nodeName: on('zone-a'), ready: true, claims: byVolume ? ['data-web-1'] : [] }) : p));
      const volume = byVolume ? [pvc('data-web-1', { volumeName: 'pv-1' }), pv('pv-1', 'zone-a', { claim: 'data-web-1' })] : [];
      const { store, post } = setup({ objects: [...nodes(ZONES, 1), statefulSet('web', 6, { annotations: OPTED, claimTemplates: byVolume ? ['data'] : undefined }), ...pods, ...volume] });
      assert.equal((await allowed(post, 'web-1')).allowed, true);
      assert.deepEqual(approvalsOf(store, 'StatefulSet', 'web').map((a) => [a.pod, a.zone]), [['web-1', 'zone-a']]);
      store.delete('pods', 'default/web-1');
      const zoneB = await allowed(post, 'web-4');
      assert.equal(zoneB.allowed, false, `by volume ${byVolume}: web-4 (zone-b) must wait for zone-a's missing web-1`);
      assert.match(zoneB.status.message, /zone-a is under disruption; .*waits for ordinal 1 has no pod \(zone-a\)/);
      assert.equal((await allowed(post, 'web-3')).allowed, true, `by volume ${byVolume}: zone-a's own budget`);
    }
  });

  it('point 2: an opted-in workload no placement policy covers is judged on its pods\' zones (a Deployment with the budget alone, an ignored StatefulSet)', async () => {
    const notReady = { ...node('node-b-1', 'zone-b'), status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    const cluster = [node('node-a-1', 'zone-a'), notReady, node('node-c-1', 'zone-c')];
    const deploy = setup({ objects: [...cluster, ...deployment('api', 3, { 'zonekeeper.io/zone-disruption-budget': 'zone' }),
      ...['a', 'b', 'c'].map((z) => rsPod('api', z, { nodeName: on(`zone-${z}`), ready: true }))] });
    const refused = await allowed(deploy.post, 'api-rs-a');
    assert.equal(refused.status?.code, 429, JSON.stringify(refused));
    assert.match(refused.status.message, /^zone disruption budget of Deployment default\/api: zone-b is under disruption; .*waits for pod api-rs-b is on node node-b-1, which is not Ready \(zone-b\)/);
    const explained = await (await deploy.app.adminApp.request('/debug/explain?pod=default/api-rs-a')).json() as Raw;
    assert.deepEqual(explained.disruption.down.map((d: Raw) => d.zone), ['zone-b'], '/debug/explain shows it, though no policy places it');
    assert.equal(explained.disruption.lastEviction.outcome, 'refused');
    assert.equal((await allowed(deploy.post, 'api-rs-b')).allowed, true, 'the pod already down may go');
    const ignored = setup({ objects: [...cluster, statefulSet('web', 6, { annotations: { ...OPTED, 'zonekeeper.io/ignore': 'true' } }), ...six()] });
    assert.equal((await allowed(ignored.post, 'web-0')).status?.code, 429, 'zonekeeper.io/ignore places nothing, the budget still holds');
  });

  it('point 4: a retry is judged again: an approved web-0 waits once zone-b went down in between; otherwise its approval is renewed', async () => {
    const { store, post, app } = setup();
    assert.equal((await allowed(post, 'web-0')).allowed, true);
    const first = approvalsOf(store, 'StatefulSet', 'web');
    // The user's PDB refused it; meanwhile web-1 (zone-b) went down; the drain retries.
    store.upsert('pods', { ...store.pod('default', 'web-1')!, ready: false } as never);
    const retry = await allowed(post, 'web-0');
    assert.equal(retry.allowed, false, 'kube-apiserver re-checks every eviction; so does the gate');
    assert.match(retry.status.message, /zone-b is under disruption; .*waits for pod web-1 is not Ready \(zone-b\)/);
    store.upsert('pods', { ...store.pod('default', 'web-1')!, ready: true } as never);
    app.clock.advance(20_000);
    assert.equal((await allowed(post, 'web-0')).allowed, true);
    const renewed = approvalsOf(store, 'StatefulSet', 'web');
    assert.equal(renewed.length, 1);
    assert.equal(Date.parse(renewed[0]!.at) - Date.parse(first[0]!.at), 20_000, 'the retry renewed its approval');
  });

  it('point 5: unplaced replicas: only as many as approved pods have gone are charged to their zone; the rest block every zone', async () => {
    const gone = JSON.stringify([{ pod: 'api-rs-a', uid: 'pod-api-rs-a', zone: 'zone-a', at: '2026-11-20T23:59:55.000Z' }]);
    const { post } = setup({ objects: [...nodes(ZONES, 1),
      ...deployment('api', 6, { 'zonekeeper.io/zone-preferences': '{}', 'zonekeeper.io/zone-disruption-budget': 'zone', 'zonekeeper.io/disruption-approvals': gone }),
      rsPod('api', 'a2', { nodeName: on('zone-a'), ready: true }), rsPod('api', 'a3', { nodeName: 'node-a-1', ready: true }),
      rsPod('api', 'b', { nodeName: on('zone-b'), ready: true }), rsPod('api', 'c', { nodeName: on('zone-c'), ready: true }),
      // A replica Pending in no zone yet: not the evicted one's replacement alone.
      rsPod('api', 'p')] });
    const v = await allowed(post, 'api-rs-a2');
    assert.equal(v.status?.code, 429, JSON.stringify(v));
    assert.match(v.status.message, /a zone not known yet is under disruption; .*waits for 1 more replicas have no available pod in a known zone/);
  });

  it('point 7: a Deployment\'s terminating pod whose replacement is Ready holds no other zone back (as a PDB counts)', async () => {
    const objects = (replacementReady: boolean) => [...nodes(ZONES, 1), ...deployment('api', 3, { 'zonekeeper.io/zone-preferences': '{}', 'zonekeeper.io/zone-disruption-budget': 'zone' }),
      rsPod('api', 'a', { nodeName: on('zone-a'), ready: true, terminating: true }), rsPod('api', 'a-new', { nodeName: on('zone-a'), ready: replacementReady }),
      rsPod('api', 'b', { nodeName: on('zone-b'), ready: true }), rsPod('api', 'c', { nodeName: on('zone-c'), ready: true })];
    const v = await allowed(setup({ objects: objects(true) }).post, 'api-rs-b');
    assert.equal(v.allowed, true, JSON.stringify(v));
    const waits = await allowed(setup({ objects: objects(false) }).post, 'api-rs-b');
    assert.match(waits.status.message, /zone-a is under disruption; .*waits for pod api-rs-a-new is not Ready \(zone-a\)$/);
  });

  it('point 9: the record is bounded: at 1,000 approvals an eviction is refused, saying so; gone pods\' approvals beyond their zone\'s down seats are pruned', async () => {
    const big = Array.from({ length: 3003 }, (_, i) => stsPod('web', i, { nodeName: on(ZONES[i % 3]!), ready: true }));
    const at = '2026-11-20T23:59:59.000Z';
    const standing = big.filter((_, i) => i % 3 === 0).slice(0, 1000).map((p) => ({ pod: p.metadata.name, uid: p.metadata.uid, zone: 'zone-a', at }));
    const full = setup({ objects: [...nodes(ZONES, 1), statefulSet('web', 3003, { annotations: { ...OPTED, 'zonekeeper.io/disruption-approvals': JSON.stringify(standing) } }), ...big] });
    const refused = await allowed(full.post, 'web-3000');
    assert.equal(refused.status?.code, 429, 'the record is at its bound');
    assert.match(refused.status.message, /zonekeeper\.io\/disruption-approvals would hold 1001 approvals \(\d+ KiB\), more than its bound of 1000 or 100 KiB: too many evictions not yet seen through/);
    assert.equal(approvalsOf(full.store, 'StatefulSet', 'web').length, 1000, 'nothing written');
    // 50 approvals of pods gone long ago, zone-a with one seat down: one is kept, the record shrinks when next written.
    const old = Array.from({ length: 50 }, (_, i) => ({ pod: `old-${i}`, uid: `u-${i}`, zone: 'zone-a', at: '2026-11-20T00:00:00.000Z' }));
    const pruned = setup({ down: [0], annotations: { ...OPTED, 'zonekeeper.io/disruption-approvals': JSON.stringify(old) } });
    assert.equal((await allowed(pruned.post, 'web-3')).allowed, true);
    assert.deepEqual(approvalsOf(pruned.store, 'StatefulSet', 'web').map((a) => a.pod), ['old-49', 'web-3']);
  });
});

describe('issue 65: what the cache cannot tell is read live', () => {
  /** The service over an API server in memory: GETs of the workload and of pods answered by `pods`. */
  function live(pods: (name: string) => { status: number; body?: unknown }, o: { down?: number[]; approvals?: string } = {}) {
    const annotations = { ...OPTED, ...(o.approvals ? { 'zonekeeper.io/disruption-approvals': o.approvals } : {}) };
    const store = storeOf([...nodes(ZONES, 1), statefulSet('web', 6, { annotations }), ...six(o.down)]);
    let rv = 0;
    const api = recordingApi((r) => {
      if (r.path.includes('/pods/')) return pods(r.path.split('/').pop()!);
      if (r.method === 'GET') return { status: 200, body: { metadata: { resourceVersion: String(++rv), annotations } } };
      return { status: 200, body: {} };
    });
    const metrics = createMetrics();
    const clock = fakeClock(Date.parse('2026-11-21T00:01:00Z'));
    const service = decisionService({ source: memorySource(store, 'test'), actuator: kubeActuator(api, silent, metrics, 2000, clock), metrics, log: silent, config: parseConfig({}), clock });
    return { api, service, ask: (name: string) => service.eviction({ namespace: 'default', name, dryRun: false, leading: true, asker: 'zonekeeper' }) };
  }
  const pod = (name: string, o: { ready: boolean; rv?: string; uid?: string }) => ({ status: 200, body: {
    metadata: { name, uid: o.uid ?? `pod-${name}`, resourceVersion: o.rv ?? '5' }, status: { conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False' }] } } });

  it('point 6: an approval past its time lapses only once a live read shows its pod still standing: gone but still cached, it holds its zone', async () => {
    // web-0 approved 60 s ago; the cache still shows it Ready, the API server has it gone.
    const approvals = JSON.stringify([{ pod: 'web-0', uid: 'pod-web-0', zone: 'zone-a', at: '2026-11-21T00:00:00.000Z' }]);
    const gone = live(() => ({ status: 404, body: { message: 'not found' } }), { approvals });
    const refused = await gone.ask('web-1');
    assert.equal(refused.allowed, false, refused.why);
    assert.match(refused.why, /zone-a is under disruption; .*waits for pod web-0 is being evicted \(zone-a\)/);
    const standing = live((name) => pod(name, { ready: true }), { approvals });
    assert.equal((await standing.ask('web-1')).allowed, true, 'the live read confirms the lapse: a PDB refused it');
    const unreadable = live(() => ({ status: 500, body: { message: 'etcd timeout' } }), { approvals });
    assert.equal((await unreadable.ask('web-1')).allowed, false, 'not read, never decided blind');
  });

  it('point 8: a pod let go as down already is read live: turned Ready since, refused; still down, its eviction is conditional on its resourceVersion', async () => {
    const turned = live((name) => pod(name, { ready: true }), { down: [1] });
    const refused = await turned.ask('web-1');
    assert.equal(refused.allowed, false);
    assert.match(refused.why, /pod web-1 turned Ready since its cache saw it down/);
    const down = live((name) => pod(name, { ready: false, rv: '77' }), { down: [1] });
    const ok = await down.ask('web-1');
    assert.equal(ok.allowed, true, ok.why);
    assert.equal(ok.resourceVersion, '77');
    // zonekeeper's own eviction carries it, as eviction.go's own delete of an unhealthy pod does.
    const evictions = recordingApi(() => ({ status: 201, body: {} }));
    await evictPod(evictions, { namespace: 'default', name: 'web-1', uid: 'pod-web-1' }, silent, { judge: async () => ok, by: 'test' });
    assert.deepEqual(evictions.requests[0]!.body.deleteOptions.preconditions, { uid: 'pod-web-1', resourceVersion: '77' });
  });
});
