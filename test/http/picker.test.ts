import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployment, nodes, rsPod, storeOf, type Raw } from '../support/builders.js';
import { silent, testApp } from '../support/app.js';
import type { AdminAuthorizer } from '../../src/server/adminAuth.js';
import { pickerRoutes } from '../../src/server/extenderRoutes.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const cluster = () => {
  const pods = ['node-a-1', 'node-a-2', 'node-b-1', 'node-b-2', 'node-c-1', 'node-c-2'].map((n, i) => {
    const p = rsPod('web', `p${i}`, { nodeName: n, annotations: { 'zonekeeper.io/instance-id': String([0, 3, 1, 4, 2, 5][i]) } });
    p.status.conditions = [{ type: 'Ready', status: 'True' }];
    return p;
  });
  return { pods, store: storeOf([...nodes(ZONES, 2), ...deployment('web', 6, { 'zonekeeper.io/instance-ids': 'true' }), ...pods]) };
};
const PATH = '/v1/downscale-pod-picker/default';

describe('POST /v1/downscale-pod-picker/{namespace}', () => {
  it('answers the KEP contract', async () => {
    const { pods, store } = cluster();
    const app = testApp(store);
    const res = await app.post(PATH, { number_of_pods_requested: 3, candidate_pods: pods.map((p: Raw) => p.metadata.name) });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body, { chosen_pods: ['web-rs-p5', 'web-rs-p3', 'web-rs-p1'], tied_pods: [] });
    assert.match(await app.metrics.registry.metrics(), /zonekeeper_decisions_total\{verb="downscale-pod-picker",outcome="picked"\} 1/);
  });

  for (const [what, body, field] of [
    ['n = 0', { number_of_pods_requested: 0, candidate_pods: ['a'] }, 'number_of_pods_requested'],
    ['n negative', { number_of_pods_requested: -2, candidate_pods: ['a'] }, 'number_of_pods_requested'],
    ['n not an integer', { number_of_pods_requested: 1.5, candidate_pods: ['a'] }, 'number_of_pods_requested'],
    ['n a string', { number_of_pods_requested: '2', candidate_pods: ['a'] }, 'number_of_pods_requested'],
    ['candidates not a list', { number_of_pods_requested: 1, candidate_pods: 'a,b' }, 'candidate_pods'],
    ['candidates not strings', { number_of_pods_requested: 1, candidate_pods: ['a', 3] }, 'candidate_pods.1'],
    ['no candidates field', { number_of_pods_requested: 1 }, 'candidate_pods'],
  ] as const) {
    it(`${what}: 400 naming ${field}`, async () => {
      const res = await testApp(cluster().store).post(PATH, body);
      assert.equal(res.status, 400);
      assert.equal((await res.json()).field, field);
    });
  }

  it('an empty body is a 400, malformed JSON a 400, an oversized body a 413', async () => {
    const app = testApp(cluster().store, { config: { extender: { pickerBodyLimitBytes: 1000 } } });
    assert.equal((await app.post(PATH, '')).status, 400);
    assert.equal((await app.post(PATH, '{"number_of_pods_requested":')).status, 400);
    const big = await app.post(PATH, { number_of_pods_requested: 1, candidate_pods: Array.from({ length: 200 }, (_, i) => `pod-${i}`) });
    assert.equal(big.status, 413);
  });

  it('is 503 until the cache has synced', async () => {
    const res = await testApp(cluster().store, { synced: () => false }).post(PATH, { number_of_pods_requested: 1, candidate_pods: ['x'] });
    assert.equal(res.status, 503);
  });
});

describe('the picker listener (picker.listen): the KEP-3189 verb alone, authorized by the API server', () => {
  /** An authorizer as the API server would answer: tokens by user, and who may post. */
  const authorizer = (users: Record<string, string>, allowed: Set<string>) => {
    const asked: string[] = [];
    const auth: AdminAuthorizer = {
      async check(header, path, verb = 'get') {
        asked.push(`${verb} ${path}`);
        const user = header?.startsWith('Bearer ') ? users[header.slice(7)] : undefined;
        if (!user) return { allowed: false, status: 401, message: 'no token' };
        return allowed.has(user) ? { allowed: true, user } : { allowed: false, status: 403, message: `${user} may not ${verb} ${path}` };
      },
    };
    return { auth, asked };
  };
  const call = (app: ReturnType<typeof pickerRoutes>, token: string | undefined, body: unknown, method = 'POST') => app.request(PATH, {
    method, body: method === 'POST' ? JSON.stringify(body) : undefined,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });

  it('401 without a token, 403 for a user without the grant, 200 with it; the SubjectAccessReview asks post on the path', async () => {
    const { pods, store } = cluster();
    const app = testApp(store);
    const { auth, asked } = authorizer({ t1: 'system:serviceaccount:ops:scaler', t2: 'system:serviceaccount:ops:other' }, new Set(['system:serviceaccount:ops:scaler']));
    const picker = pickerRoutes(app.extender, app.metrics, silent, 1024 * 1024, auth);
    const body = { number_of_pods_requested: 3, candidate_pods: pods.map((p: Raw) => p.metadata.name) };
    const none = await call(picker, undefined, body);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await call(picker, 't2', body)).status, 403);
    const ok = await call(picker, 't1', body);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { chosen_pods: ['web-rs-p5', 'web-rs-p3', 'web-rs-p1'], tied_pods: [] });
    assert.ok(asked.every((a) => a === `post ${PATH}`), asked.join(', '));
  });

  it('serves nothing else: the extender verbs are 404 there, other methods 405', async () => {
    const { store } = cluster();
    const app = testApp(store);
    const picker = pickerRoutes(app.extender, app.metrics, silent, 1024 * 1024);
    assert.equal((await picker.request('/filter', { method: 'POST', body: '{}' })).status, 404);
    assert.equal((await picker.request('/metrics')).status, 404);
    const get = await call(picker, undefined, undefined, 'GET');
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
  });
});
