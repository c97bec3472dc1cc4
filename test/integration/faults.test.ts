// Faults of the API server behind the watches, and the admin listener's authorization,
// against a list/watch server on 127.0.0.1 (issue 8: D6, D7, D9).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { memoryActuator } from '../../src/actuator/actuator.js';
import type { ApiClient } from '../../src/cluster/apiClient.js';
import type { SnapshotSource } from '../../src/cluster/source.js';
import { watchCache, type WatchCacheOptions } from '../../src/cluster/watchCache.js';
import { parseConfig } from '../../src/common/config.js';
import { STALE } from '../../src/decision/recording.js';
import { decisionService } from '../../src/decision/service.js';
import { createExtender } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { kubernetesAuthorizer } from '../../src/server/adminAuth.js';
import { adminRoutes, probeRoutes } from '../../src/server/adminRoutes.js';
import { extenderRoutes } from '../../src/server/extenderRoutes.js';
import { listen, type Listener } from '../../src/server/listen.js';
import { nodes, pod, statefulSet, stsPod } from '../support/builders.js';
import { fixture, silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime, waitFor } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

const FAST: WatchCacheOptions = {
  pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 30, backoffInitialMs: 20, backoffMaxMs: 200,
  crdRecheckSeconds: 60, maxStalenessSeconds: 1,
};

async function cluster(): Promise<{ api: FakeApiServer; client: ApiClient }> {
  const api = await new FakeApiServer().start();
  for (const n of nodes(['zone-a', 'zone-b', 'zone-c'], 1)) api.put(n);
  api.put(statefulSet('db', 3));
  api.put(stsPod('db', 0, { nodeName: 'node-a-1' }));
  return { api, client: api.client() };
}

describe('D7: a failed WorkloadSpread discovery is retried with the backoff, not at the 60 s recheck (fake time)', () => {
  it('one 500 from discovery: synced a backoff step after it', async () => {
    const { api, client } = await cluster();
    api.faults.push({ match: (_m, p) => p === '/apis/apps.kruise.io', status: 500, remaining: 1 });
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    const cache = watchCache(client, { ...FAST, clock }, silent);
    cache.start();
    await waitFor(() => api.faults[0]!.remaining === 0 && cache.status().kinds.every((k) => k.synced || k.off !== undefined), 'the discovery failed; every kind listed');
    assert.equal(cache.synced(), false, 'not synced while discovery has not answered');
    const took = await onFakeTime(clock, () => cache.synced(), 'synced after the failed discovery', 1_000, 10);
    assert.ok(took <= 2 * FAST.backoffInitialMs, `synced ${took} ms of fake time after the failure, with crdRecheckSeconds 60`);
    assert.equal(api.faults[0]!.remaining, 0, 'the fault was hit');
    assert.equal(cache.status().workloadSpreadCRD, 'absent');
    await cache.stop();
    await api.stop();
  });
});

describe('D9: a watch that keeps failing relists, then turns stale (fake time)', () => {
  let api: FakeApiServer;
  let cache: SnapshotSource;
  const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
  before(async () => {
    let client: ApiClient;
    ({ api, client } = await cluster());
    cache = watchCache(client, { ...FAST, clock }, silent);
    cache.start();
    await waitFor(() => cache.ready(), 'initial sync');
  });
  after(async () => {
    await cache.stop();
    await api.stop();
  });

  it('corrupt watch streams: pods added meanwhile still arrive (relist), readyz and filter turn to errors past the staleness', async () => {
    const config = parseConfig({});
    const metrics = createMetrics();
    const service = decisionService({ source: cache, actuator: memoryActuator(cache.store, silent, metrics), metrics, log: silent, config });
    const extender = createExtender(service, { source: cache, log: silent, config });
    const admin = adminRoutes({ source: cache, views: service.views, metrics, serving: () => true });
    const routes = extenderRoutes(extender, metrics, silent, config.extender);
    assert.equal((await admin.request('/readyz')).status, 200);

    api.corruptWatches = true;
    api.dropWatches();
    api.put(pod('added-while-corrupt', undefined));
    await onFakeTime(clock, () => !!cache.snapshot.pod('default', 'added-while-corrupt'), 'the relist brought the pod in', 5_000);
    const pods = cache.status().kinds.find((k) => k.kind === 'pods')!;
    assert.ok(pods.restarts.decode > 0, 'counted as decode restarts');
    assert.match(pods.lastError, /malformed event/);

    const stale = await onFakeTime(clock, () => !cache.ready(), 'stale after maxStalenessSeconds', 5_000);
    assert.ok(stale >= 0, `stale ${stale} ms of fake time later`);
    const readyz = await admin.request('/readyz');
    assert.equal(readyz.status, 503);
    const res = await routes.request('/filter', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fixture('filter-nodenames-statefulset-pod.json').body) });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { Error: string }).Error, STALE);

    api.corruptWatches = false;
    api.dropWatches();
    await onFakeTime(clock, () => cache.ready(), 'ready again once the watch works', 5_000);
    assert.equal((await admin.request('/readyz')).status, 200);
  });

  it('an API server that errors on every request: stale past the staleness, ready within a backoff step of recovering', async () => {
    const outage = { match: () => true, status: 500, remaining: Number.MAX_SAFE_INTEGER };
    api.faults.push(outage);
    api.dropWatches();
    await onFakeTime(clock, () => !cache.ready(), 'stale during the outage', 5_000);
    outage.remaining = 0;
    // Backoff is capped at 200 ms here; a working watch proves itself after 1 s of streaming.
    const back = await onFakeTime(clock, () => cache.ready(), 'ready after the outage', 2_500);
    assert.ok(back <= 2_500, `ready ${back} ms of fake time after the API came back`);
  });
});

describe('D6: /metrics and /debug need a token the API server accepts and authorizes; probes do not', () => {
  let api: FakeApiServer;
  let admin: Listener;
  let probes: Listener;
  before(async () => {
    let client: ApiClient;
    ({ api, client } = await cluster());
    api.tokens.set('reader-token', { username: 'prometheus', groups: ['monitoring'], audiences: ['zonekeeper'] });
    api.tokens.set('nobody-token', { username: 'nobody', groups: [], audiences: ['zonekeeper'] });
    // A pod's own token (for the API server), as one read off the pod network would be.
    api.tokens.set('api-server-token', { username: 'prometheus', groups: ['monitoring'] });
    api.allowedPaths.set('prometheus', ['/metrics', '/debug/*']);
    const cache = watchCache(client, { ...FAST, clock: fakeClock(Date.parse('2026-11-25T12:00:00Z')) }, silent);
    cache.start();
    await waitFor(() => cache.ready(), 'sync');
    const config = parseConfig({ admin: { tokenAudiences: ['zonekeeper'] } });
    const metrics = createMetrics();
    const service = decisionService({ source: cache, actuator: memoryActuator(cache.store, silent, metrics), metrics, log: silent, config });
    admin = await listen(adminRoutes({ source: cache, views: service.views, metrics, serving: () => true, auth: kubernetesAuthorizer(client, config.admin.tokenAudiences) }), '127.0.0.1:0');
    probes = await listen(probeRoutes({ source: cache, serving: () => true }), '127.0.0.1:0');
    stopCache = () => cache.stop();
  });
  let stopCache: () => Promise<void>;
  after(async () => {
    await Promise.all([admin.close(0), probes.close(0)]);
    await stopCache();
    await api.stop();
  });

  const get = (base: Listener, path: string, token?: string) => fetch(`${base.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('no token: 401 with WWW-Authenticate; an unknown token: 401; a user without RBAC for the path: 403', async () => {
    const none = await get(admin, '/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await get(admin, '/debug/cache', 'forged')).status, 401);
    assert.equal((await get(admin, '/debug/cache', 'nobody-token')).status, 403);
  });

  it('with admin.tokenAudiences, a token issued for the API server (replayable there) is refused: the TokenReview asks for the audience', async () => {
    const res = await get(admin, '/metrics', 'api-server-token');
    assert.equal(res.status, 401);
    assert.match(await res.text(), /not accepted|not issued for zonekeeper/);
  });

  it('an authorized token reads /metrics and /debug; health stays open on both listeners', async () => {
    const m = await get(admin, '/metrics', 'reader-token');
    assert.equal(m.status, 200);
    assert.match(await m.text(), /zonekeeper_decisions_total|zonekeeper_request_duration_seconds/);
    assert.equal((await get(admin, '/debug/cache', 'reader-token')).status, 200);
    for (const l of [admin, probes]) {
      assert.equal((await get(l, '/healthz')).status, 200);
      assert.equal((await get(l, '/readyz')).status, 200);
    }
  });

  it('the layout page: its data needs a token like every /debug view; the static page carries none and is served to ask for one', async () => {
    assert.equal((await get(admin, '/debug/layouts')).status, 401);
    assert.equal((await get(admin, '/debug/layouts', 'nobody-token')).status, 403);
    const data = await get(admin, '/debug/layouts', 'reader-token');
    assert.equal(data.status, 200);
    assert.ok(Array.isArray(((await data.json()) as { workloads: unknown }).workloads));
    const page = await get(admin, '/ui');
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /id="login"/);
    assert.doesNotMatch(html, /zone-a|StatefulSet/, 'no cluster data in the page itself');
  });

  it('the probe listener serves nothing but health', async () => {
    for (const path of ['/metrics', '/debug/cache', '/debug/workloads/default/statefulset/db', '/debug/layouts', '/ui']) {
      assert.equal((await get(probes, path, 'reader-token')).status, 404, path);
    }
  });

  it('decisions are cached briefly: a second read does not review the token again', async () => {
    const before = api.requests.filter((r) => r.includes('tokenreviews')).length;
    await get(admin, '/debug/cache', 'reader-token');
    await get(admin, '/debug/cache', 'reader-token');
    assert.equal(api.requests.filter((r) => r.includes('tokenreviews')).length, before);
  });
});
