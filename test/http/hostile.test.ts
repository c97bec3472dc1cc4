// Regression tests for what a hostile request did to the extender (issue 8: D1–D5, D10),
// through the real routes with app.request().
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/common/config.js';
import { decisionBytes } from '../../src/decision/decisions.js';
import { seatZone, SEQUENCE_WORK_LIMIT, zoneSequence } from '../../src/placement/zoneSequence.js';
import { nodes, pvc, statefulSet, storeOf, type Raw } from '../support/builders.js';
import { fixture, testApp } from '../support/app.js';
import { seededRandom } from '../support/random.js';
import { toleratedNodesCase } from '../support/hostile.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const cluster = (extra: Raw[] = []) => storeOf([...nodes(ZONES, 2), statefulSet('db', 3), pvc('data-db-0', { volumeName: '' }), ...extra]);
const filterBody = () => {
  const b = fixture('filter-nodenames-statefulset-pod.json').body;
  b.Pod.spec.volumes = [];
  b.NodeNames = ['node-a-1', 'node-b-1', 'node-c-1'];
  return b;
};

// How long these take is measured by `npm run bench` (test/bench/hostile.ts), not here.
describe('D1: the seat of a huge ordinal or instance ID costs O(zones), not a loop up to it', () => {
  for (const [what, mutate, ordinal] of [
    ['name suffix', (b: Raw) => { b.Pod.metadata.name = 'db-1000000000'; delete b.Pod.metadata.labels?.['apps.kubernetes.io/pod-index']; }, 1_000_000_000],
    ['pod-index label', (b: Raw) => { b.Pod.metadata.labels = { ...b.Pod.metadata.labels, 'apps.kubernetes.io/pod-index': '2147483646' }; }, 2_147_483_646],
  ] as const) {
    it(`${what}: pinned to L[i mod 3] at once`, async () => {
      const app = testApp(cluster());
      const b = filterBody();
      mutate(b);
      const res = await app.post('/filter', b);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(body.NodeNames, [`node-${'abc'[ordinal % 3]}-1`]);
    });
  }

  it('an ordinal past int32 is no ordinal: the pod waits with a reason', async () => {
    const app = testApp(cluster());
    const b = filterBody();
    b.Pod.metadata.name = 'db-99999999999999999999';
    delete b.Pod.metadata.labels?.['apps.kubernetes.io/pod-index'];
    const body = await (await app.post('/filter', b)).json();
    assert.deepEqual(body.NodeNames, []);
    assert.match(body.FailedAndUnresolvableNodes['node-a-1'], /cannot read an ordinal/);
  });

  it('a large spec.ordinals.start: index = ordinal − start, pinned at once', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3, { ordinalsStart: 2_000_000_000 })]));
    const b = filterBody();
    b.Pod.metadata.name = 'db-2000000004';
    delete b.Pod.metadata.labels?.['apps.kubernetes.io/pod-index'];
    const body = await (await app.post('/filter', b)).json();
    assert.deepEqual(body.NodeNames, ['node-b-1'], 'index 4 → zone-b');
  });

  it('weighted preferences: a huge index is reduced by the period of the weights, and equals the simulated sequence', async () => {
    const prefs = JSON.stringify({ zones: { 'zone-a': { weight: 2 }, 'zone-b': { weight: 1 }, 'zone-c': { weight: 1 } } });
    const app = testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zone-preferences': prefs } })]));
    const b = filterBody();
    b.Pod.metadata.name = 'db-1000000001';
    delete b.Pod.metadata.labels?.['apps.kubernetes.io/pod-index'];
    const body = await (await app.post('/filter', b)).json();
    const expected = zoneSequence(ZONES, 4, (z) => ({ minReplicas: 0, maxReplicas: undefined, weight: z === 'zone-a' ? 2 : 1 }))[1_000_000_001 % 4];
    assert.deepEqual(body.NodeNames, [`node-${expected!.slice(5)}-1`]);
  });

  it('minimums and maximums beyond the work limit: a decision with a reason, not a loop', async () => {
    const prefs = JSON.stringify({ zones: { 'zone-a': { weight: 1, minReplicas: 1 }, '*': { weight: 1 } } });
    const app = testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zone-preferences': prefs } })]));
    const b = filterBody();
    b.Pod.metadata.name = 'db-2000000000';
    delete b.Pod.metadata.labels?.['apps.kubernetes.io/pod-index'];
    const body = await (await app.post('/filter', b)).json();
    assert.deepEqual(body.NodeNames, []);
    assert.match(body.FailedAndUnresolvableNodes['node-a-1'], /too far into a weighted sequence/);
  });

  it('seatZone agrees with the simulated sequence for every seat of random weighted preferences', () => {
    const rand = seededRandom(42).below;
    for (let c = 0; c < 300; c++) {
      const zones = ['a', 'b', 'c', 'd', 'e'].slice(0, 1 + rand(5));
      const p = Object.fromEntries(zones.map((z) => [z, {
        minReplicas: rand(4) === 0 ? rand(3) : 0, maxReplicas: rand(4) === 0 ? rand(6) : undefined, weight: rand(5),
      }]));
      const prefs = (z: string) => p[z]!;
      const seq = zoneSequence(zones, 60, prefs);
      for (let i = 0; i < 60; i++) assert.equal(seatZone(zones, i, prefs).zone, seq[i], `case ${c} seat ${i}: ${JSON.stringify(p)}`);
    }
    // Weights alone repeat: a seat far beyond the work limit is still answered, and equals its reduced seat.
    const w = (z: string) => ({ minReplicas: 0, maxReplicas: undefined, weight: z === 'a' ? 3 : 2 });
    assert.equal(seatZone(['a', 'b'], SEQUENCE_WORK_LIMIT * 50 + 3, w).zone, zoneSequence(['a', 'b'], 5, w)[(SEQUENCE_WORK_LIMIT * 50 + 3) % 5]);
  });
});

describe('work that follows a list in the pod is done once per pod, not once per node', () => {
  it('60,000 tolerations against 5,000 tainted nodes of a WorkloadSpread: every node judged right (its time: npm run bench)', async () => {
    const { app, req } = toleratedNodesCase();
    const body = await (await app.post('/filter', req)).json();
    assert.equal(body.NodeNames.length, 1667, 'every zone-a node tolerated and in subset a');
  });
});

describe('D2: names, uids and labels within Kubernetes\' limits, or 400 naming the field', () => {
  const big = 'a'.repeat(1024 * 1024);
  for (const [what, mutate, field] of [
    ['a 1 MiB pod name', (b: Raw) => { b.Pod.metadata.name = big; }, 'Pod.metadata.name'],
    ['a pod name that is not DNS-1123', (b: Raw) => { b.Pod.metadata.name = 'DB_0'; }, 'Pod.metadata.name'],
    ['a 1 MiB uid', (b: Raw) => { b.Pod.metadata.uid = big; }, 'Pod.metadata.uid'],
    ['a 129-character uid', (b: Raw) => { b.Pod.metadata.uid = 'u'.repeat(129); }, 'Pod.metadata.uid'],
    ['a 64-character namespace', (b: Raw) => { b.Pod.metadata.namespace = 'n'.repeat(64); }, 'Pod.metadata.namespace'],
    ['a 64-character label value', (b: Raw) => { b.Pod.metadata.labels = { app: 'v'.repeat(64) }; }, 'Pod.metadata.labels.app'],
    ['a label key with a bad prefix', (b: Raw) => { b.Pod.metadata.labels = { 'Bad_Prefix/app': 'x' }; }, 'Pod.metadata.labels.Bad_Prefix/app'],
    ['a 1 MiB owner name', (b: Raw) => { b.Pod.metadata.ownerReferences[0].name = big; }, 'Pod.metadata.ownerReferences.0.name'],
    ['a 1 MiB claim name', (b: Raw) => { b.Pod.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: big } }]; }, 'Pod.spec.volumes.0.persistentVolumeClaim.claimName'],
    ['annotations over 256 KiB', (b: Raw) => { b.Pod.metadata.annotations = { a: 'x'.repeat(300 * 1024) }; }, 'Pod.metadata.annotations'],
    ['a 300-character node name', (b: Raw) => { b.NodeNames = ['n'.repeat(300)]; }, 'NodeNames.0'],
  ] as const) {
    it(`${what}: 400 naming ${field}`, async () => {
      const b = filterBody();
      mutate(b);
      const res = await testApp(cluster()).post('/filter', b);
      assert.equal(res.status, 400);
      const body = await res.json();
      assert.equal(body.field, field);
      assert.ok(JSON.stringify(body).length < 2000, 'the error does not echo the value back whole');
    });
  }

  it('a node name with quotes and control characters is escaped in the answer, and not in the cache', async () => {
    const b = filterBody();
    const odd = 'node "a"\\\n\u2028';
    b.NodeNames = ['node-a-1', odd];
    const res = await testApp(cluster(), { config: { extender: { reportRejectedWhenPlaced: true } } }).post('/filter', b);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body.NodeNames, ['node-a-1']);
    assert.match(body.FailedNodes[odd], /not in zonekeeper's cache/);
  });

  it('300 such requests leave nothing behind: no decision, no reservation', async () => {
    const app = testApp(cluster());
    for (let i = 0; i < 300; i++) {
      const b = filterBody();
      b.Pod.metadata.name = `${big.slice(0, 1000)}${i}`;
      assert.equal((await app.post('/filter', b)).status, 400);
    }
    assert.equal(app.service.views.reservationCount(), 0);
    assert.deepEqual(app.service.views.decisionsFor(`default/${big.slice(0, 1000)}0`), []);
  });

  it('the decision log is bounded in bytes as well as in pods', async () => {
    const app = testApp(cluster(), { config: { debug: { decisionsKeptPods: 100_000, decisionsMaxBytes: 64 * 1024 } } });
    const names = (i: number) => `${'p'.repeat(240)}-${i}`;
    for (let i = 0; i < 200; i++) {
      const b = filterBody();
      b.Pod.metadata.name = names(i);
      b.Pod.metadata.uid = `uid-${i}-${'u'.repeat(100)}`;
      assert.equal((await app.post('/filter', b)).status, 200);
    }
    let kept = 0, bytes = 0;
    for (let i = 0; i < 200; i++) {
      for (const d of app.service.views.decisionsFor(`default/${names(i)}`)) { kept++; bytes += decisionBytes(d); }
    }
    assert.ok(kept > 0 && kept < 200, `${kept} decisions kept`);
    assert.ok(bytes <= 64 * 1024, `${bytes} bytes kept`);
    assert.equal(app.service.views.decisionsFor(`default/${names(199)}`).length, 1, 'the newest are kept');
  });
});

describe('D3: the number of nodes a request names is bounded by the cluster', () => {
  it('more names than the cluster could have: 400 before anything walks them; up to the bound: an answer', async () => {
    const app = testApp(cluster());
    const b = filterBody();
    b.NodeNames = Array.from({ length: 6 + 10_000 }, (_, i) => `ghost-${i}`);
    const ok = await app.post('/filter', b);
    assert.equal(ok.status, 200);
    const body = await ok.json();
    assert.equal(Object.keys(body.FailedNodes).length, 10_006);
    b.NodeNames.push('one-too-many');
    const res = await app.post('/filter', b);
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /10007 nodes sent/);
  });

  it('reasons are clipped, so an answer stays proportional to the nodes: a pod naming 2,000 missing claims', async () => {
    const app = testApp(cluster());
    const b = filterBody();
    b.Pod.spec.volumes = Array.from({ length: 2000 }, (_, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: `missing-claim-${i}` } }));
    const body = await (await app.post('/filter', b)).json();
    const reason: string = body.FailedNodes['node-a-1'];
    assert.match(reason, /missing-claim-0/);
    assert.ok(reason.length <= 512, `${reason.length} characters`);
  });
});

describe('D4: deep nesting is a 400, never a 500', () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  it('a Node 20,000 arrays deep in full-Nodes mode', async () => {
    const app = testApp(cluster());
    const req = fixture('filter-fullnodes-deployment-pod.json').body;
    const text = JSON.stringify(req).replace('"items":[{', `"items":[{"x":${deep(20_000)},`);
    const res = await app.post('/filter', text);
    assert.equal(res.status, 400);
    assert.match((await res.json()).field, /^Nodes\.items\.\d+$/);
  });

  it('a Pod 20,000 objects deep', async () => {
    const app = testApp(cluster());
    const b = filterBody();
    const text = JSON.stringify(b).replace('"spec":{', `"spec":{"x":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)},`);
    const res = await app.post('/prioritize', text);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).field, 'Pod');
  });
});

describe('D5: half a TLS configuration is a start-up error naming the missing key', () => {
  for (const [tls, missing] of [
    [{ certFile: '/c.pem' }, 'extender.tls.keyFile'],
    [{ keyFile: '/k.pem' }, 'extender.tls.certFile'],
    [{ clientCAFile: '/ca.pem' }, 'extender.tls.certFile'],
  ] as const) {
    it(`${Object.keys(tls).join('+')} alone`, () => {
      assert.throws(() => parseConfig({ extender: { tls } }), new RegExp(`${missing.replaceAll('.', '\\.')}: required`));
    });
  }
  it('the extender listener off loopback needs TLS with a client CA: filter takes seats', () => {
    assert.throws(() => parseConfig({ extender: { listen: '0.0.0.0:8888' } }), /extender\.tls: .*not loopback/);
    assert.throws(() => parseConfig({ extender: { listen: '0.0.0.0:8888', tls: { certFile: '/c', keyFile: '/k' } } }), /extender\.tls: .*clientCAFile/);
    assert.equal(parseConfig({ extender: { listen: '0.0.0.0:8888', tls: { certFile: '/c', keyFile: '/k', clientCAFile: '/ca' } } }).extender.tls.clientCAFile, '/ca');
  });
  it('the admin listener off loopback needs authorization', () => {
    assert.throws(() => parseConfig({ admin: { listen: '0.0.0.0:9090' } }), /admin\.authorization: .*not loopback/);
    assert.equal(parseConfig({ admin: { listen: '0.0.0.0:9090', authorization: 'kubernetes' } }).admin.authorization, 'kubernetes');
  });
});

describe('D10: HTTP conformance', () => {
  const app = testApp(cluster());
  const send = (path: string, init: RequestInit) => app.extenderApp.request(path, init);

  it('GET /filter is a 405 with Allow: POST', async () => {
    for (const path of ['/filter', '/prioritize', '/v1/downscale-pod-picker/default']) {
      const res = await send(path, { method: 'GET' });
      assert.equal(res.status, 405, path);
      assert.equal(res.headers.get('allow'), 'POST');
    }
  });

  it('text/plain and XML are a 415', async () => {
    for (const type of ['text/plain', 'application/xml', 'text/xml; charset=utf-8']) {
      const res = await send('/filter', { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify(filterBody()) });
      assert.equal(res.status, 415, type);
    }
    const ok = await send('/filter', { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(filterBody()) });
    assert.equal(ok.status, 200);
  });

  it('a gzip body is inflated; an unknown encoding is a 415', async () => {
    const packed = gzipSync(JSON.stringify(filterBody()));
    const res = await send('/filter', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: packed });
    assert.equal(res.status, 200);
    assert.deepEqual((await res.json() as any).NodeNames, ['node-a-1']);
    const br = await send('/filter', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: packed });
    assert.equal(br.status, 415);
    const broken = await send('/filter', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: 'not gzip' });
    assert.equal(broken.status, 415);
  });

  it('a gzip bomb inflating past the body limit is a 413', async () => {
    const small = testApp(cluster(), { config: { extender: { bodyLimitBytes: 64 * 1024 } } });
    const bomb = gzipSync(JSON.stringify({ ...filterBody(), pad: 'x'.repeat(10 * 1024 * 1024) }));
    assert.ok(bomb.length < 64 * 1024, `${bomb.length} bytes packed`);
    const res = await small.extenderApp.request('/filter', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb });
    assert.equal(res.status, 413);
  });

  it('the picker refuses a namespace that is not one', async () => {
    const res = await app.post(`/v1/downscale-pod-picker/${'N'.repeat(70)}`, { number_of_pods_requested: 1, candidate_pods: ['a'] });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).field, 'namespace');
  });
});
