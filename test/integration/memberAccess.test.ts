import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { federationWatch, type FederationView } from '../../src/cluster/memberClusters.js';
import { Readable } from 'node:stream';
import pino from 'pino';
import type { ApiClient } from '../../src/cluster/apiClient.js';
import { memberClient, type MemberAccess } from '../../src/cluster/memberAccess.js';
import { fakeClock } from '../../src/common/clock.js';
import { renewed } from '../../src/controllers/webhookPki.js';
import { silent } from '../support/app.js';
import { node } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime } from '../support/wait.js';

// Where a member's credentials may go (docs/security.md#across-clusters). Each Cluster points its
// apiEndpoint at a listener of the test's: through the proxy none is ever contacted and no Secret
// is read; direct, only a Push member's own token reaches its endpoint, over TLS that verified.

const NS = 'karmada-cluster';
const WORKLOAD = { kind: 'StatefulSet', namespace: 'db', name: 'db' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A TCP listener that counts connections and keeps whatever is sent to it. */
async function trap(): Promise<{ port: number; connections: number; bytes: string; close(): Promise<void> }> {
  const t = { port: 0, connections: 0, bytes: '', close: () => new Promise<void>((r) => server.close(() => r())) };
  const server = net.createServer((s) => {
    t.connections++;
    s.on('data', (d) => (t.bytes += d.toString()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.port = (server.address() as AddressInfo).port;
  return t;
}

/** An HTTPS API server for 127.0.0.1 (empty lists, watches held open) recording each request's path and Authorization. */
async function tlsServer() {
  const pki = renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 2);
  const seen = { handshakes: 0, requests: [] as { path: string; auth: string }[] };
  const server = https.createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    seen.requests.push({ path: req.url!, auth: req.headers.authorization ?? '' });
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url!.includes('watch=1')) res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: '1' } } })}\n`);
    else res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '1' }, items: [] }));
  });
  server.on('secureConnection', () => seen.handshakes++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const close = () => { server.closeAllConnections(); return new Promise<void>((r) => server.close(() => r())); };
  return { port, caBundle: pki.caBundle, seen, close };
}

const cluster = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'cluster.karmada.io/v1alpha1', kind: 'Cluster', metadata: { name },
  spec: { syncMode: 'Push', secretRef: { namespace: NS, name }, impersonatorSecretRef: { namespace: NS, name: `${name}-impersonator` }, ...spec },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const KARMADA_CLUSTER = { ready: 'True', readyMessage: '', taints: [], labels: {}, provider: '', region: '', deleting: false, apiEndpoint: '', secretRef: undefined,
  insecureSkipTLSVerification: false, zones: [], syncMode: 'Push', impersonatorSecret: 'm1-impersonator' };
const secret = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, data });

function watchFederation(karmada: FakeApiServer, memberAccess: MemberAccess, log = silent) {
  const clock = fakeClock(Date.parse('2026-11-29T06:00:00Z'));
  const watch = { pageSize: 500, watchTimeoutSeconds: 300, silenceSeconds: 360, backoffInitialMs: 100, backoffMaxMs: 1000, maxStalenessSeconds: 30 };
  const view = federationWatch(karmada.client(), { ...watch, clock, memberAccess, secretRecheckMs: 10_000 }, log);
  view.start();
  // Once Karmada's objects are listed, every Cluster has its member connection.
  const until = (cond: () => boolean, what: string) => onFakeTime(clock, () => view.ready() && cond(), what, 60_000);
  const member = (name: string) => view.members().find((m) => m.name === name)!;
  return { view, until, member };
}

describe('members through Karmada\'s cluster proxy (karmada.memberAccess: proxy)', () => {
  let karmada: FakeApiServer, member: FakeApiServer, listener: Awaited<ReturnType<typeof trap>>, view: FederationView;
  before(async () => {
    [karmada, member, listener] = [await new FakeApiServer().start(), await new FakeApiServer().start(), await trap()];
    for (const z of ['zone-a', 'zone-b', 'zone-c']) member.put(node(`n-${z}`, z));
    const endpoint = `http://127.0.0.1:${listener.port}`;
    for (const name of ['m1', 'noimp', 'borrow']) {
      karmada.proxies.set(name, member);
      karmada.put(secret(name, { token: b64('test-token') }));
      karmada.put(secret(`${name}-impersonator`, { token: b64('test-token') }));
    }
    karmada.put(cluster('m1', { apiEndpoint: endpoint, insecureSkipTLSVerification: true }));
    karmada.put(cluster('noimp', { apiEndpoint: endpoint, impersonatorSecretRef: undefined }));
    // Karmada's proxy would send m1's impersonator token to the endpoint this Cluster names.
    karmada.put(cluster('borrow', { apiEndpoint: endpoint, impersonatorSecretRef: { namespace: NS, name: 'm1-impersonator' } }));
  });
  after(async () => {
    await view?.stop();
    await Promise.all([karmada.stop(), member.stop(), listener.close()]);
  });

  it('reads a member through the proxy; the endpoint a Cluster names gets no connection, no Secret is read; a member Karmada cannot proxy is unknown, named', async () => {
    const f = watchFederation(karmada, 'proxy');
    view = f.view;
    const settled = () => f.member('m1').healthy && f.member('noimp').error !== 'connecting' && f.member('borrow').error !== 'connecting';
    await f.until(() => settled() || listener.connections > 0, 'm1 read, the others refused (or a leak)');
    assert.deepEqual([listener.connections, listener.bytes], [0, ''], 'nothing reached the endpoint the Clusters name');
    assert.deepEqual(karmada.requests.filter((r) => r.includes('/secrets')), [], 'no Secret read');
    assert.deepEqual(view.reading('m1', WORKLOAD)?.nodes.map((n) => n.zone).sort(), ['zone-a', 'zone-b', 'zone-c']);
    assert.ok(karmada.requests.some((r) => r.startsWith('GET /apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/nodes')), 'through the proxy');
    assert.equal(view.reading('noimp', WORKLOAD), undefined);
    assert.match(f.member('noimp').error, /^Cluster noimp names no spec\.impersonatorSecretRef: Karmada's cluster proxy cannot serve it/);
    assert.equal(view.reading('borrow', WORKLOAD), undefined);
    assert.match(f.member('borrow').error, /^Cluster borrow's spec\.impersonatorSecretRef names m1-impersonator, not borrow-impersonator/);
    assert.deepEqual(karmada.requests.filter((r) => /clusters\/(noimp|borrow)\/proxy/.test(r)), [], 'Karmada never asked to proxy them');
  });
});

describe('a member\'s failed answers: its status and a fixed text, never its body', () => {
  const WORDS = '<html>member says: {"token":"leaked"}\u001b[31m</html>';
  const cluster1 = { ...KARMADA_CLUSTER, name: 'm1' } as never;

  it('list, request and watch: the body is replaced, whatever the member wrote', async () => {
    const api: ApiClient = {
      server: 'https://karmada',
      request: async () => ({ status: 500, body: WORDS }),
      requestBytes: async () => ({ status: 403, body: Buffer.from(WORDS) }),
      stream: async () => Object.assign(Readable.from([Buffer.from(WORDS)]), { statusCode: 502, headers: {} }) as never,
    };
    const { client } = await memberClient(api, cluster1, 'proxy');
    const said = [(await client.request('GET', '/api/v1/pods')).body, (await client.requestBytes('GET', '/api/v1/pods')).body.toString()];
    const watch = await client.stream('/api/v1/pods?watch=1', new AbortController().signal);
    for await (const chunk of watch as AsyncIterable<Buffer>) said.push(chunk.toString());
    assert.equal(watch.statusCode, 502);
    assert.deepEqual(said.map((t) => JSON.parse(t).message), [
      'the member, or Karmada\'s proxy to it, failed or is unreachable',
      'forbidden: manifests/karmada/member-rbac.yaml in the member (proxy: rbac.yaml\'s clusters/proxy on Karmada)',
      'the member, or Karmada\'s proxy to it, failed or is unreachable',
    ]);
  });

  it('a member answering 503 with words of its own: the log and the member\'s error say the status, not the words', async () => {
    const [karmada, member] = [await new FakeApiServer().start(), await new FakeApiServer().start()];
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    member.faults.push({ match: (_m, p) => p === '/api/v1/pods', status: 503, remaining: 1_000 });
    karmada.proxies.set('m1', member);
    karmada.put(cluster('m1', { apiEndpoint: 'https://127.0.0.1:1' }));
    const f = watchFederation(karmada, 'proxy', log);
    try {
      await f.until(() => /503/.test(f.member('m1').error), 'm1 failing');
      assert.match(f.member('m1').error, /^list pods: 503 the member, or Karmada's proxy to it, failed or is unreachable$/);
      assert.ok(lines.some((l) => l.includes('503')), 'the status is logged');
      assert.deepEqual(lines.filter((l) => l.includes('injected fault')), [], 'the member\'s words are not');
    } finally {
      await f.view.stop();
      await Promise.all([karmada.stop(), member.stop()]);
    }
  });
});

describe('members read directly (karmada.memberAccess: direct): a token only to a Push member\'s own https endpoint that verifies', () => {
  let karmada: FakeApiServer, plain: Awaited<ReturnType<typeof trap>>, good: Awaited<ReturnType<typeof tlsServer>>,
    stranger: Awaited<ReturnType<typeof tlsServer>>, f: ReturnType<typeof watchFederation> | undefined;
  before(async () => {
    [karmada, plain, good, stranger] = [await new FakeApiServer().start(), await trap(), await tlsServer(), await tlsServer()];
    const verified = `https://127.0.0.1:${good.port}`;
    for (const name of ['good', 'pull', 'plain', 'unverified', 'thief']) {
      // Each Secret's CA verifies `good`: only the rules, not TLS, keep the refused ones away from it.
      karmada.put(secret(name, { token: b64(`token-of-${name}`), ...(name === 'unverified' ? {} : { caBundle: b64(good.caBundle) }) }));
    }
    karmada.put(cluster('good', { apiEndpoint: `${verified}/good`, secretRef: { namespace: NS, name: 'elsewhere' } }));
    karmada.put(cluster('pull', { apiEndpoint: `${verified}/pull`, syncMode: 'Pull' }));
    karmada.put(cluster('plain', { apiEndpoint: `http://127.0.0.1:${plain.port}` }));
    karmada.put(cluster('unverified', { apiEndpoint: `https://127.0.0.1:${stranger.port}`, insecureSkipTLSVerification: true }));
    karmada.put(cluster('thief', { apiEndpoint: `${verified}/thief`, secretRef: { namespace: NS, name: 'good' } }));
  });
  after(async () => {
    await f?.view.stop();
    await Promise.all([karmada.stop(), plain.close(), good.close(), stranger.close()]);
  });

  it('Pull, http:// and another member\'s Secret are refused before any request; an unverifiable certificate completes no TLS; each names why', async () => {
    f = watchFederation(karmada, 'direct');
    const { view } = f;
    const refused = ['pull', 'plain', 'thief', 'good'];
    const leaked = () => plain.connections + stranger.seen.handshakes + good.seen.requests.length > 0;
    await f.until(() => (refused.every((n) => f!.member(n).error !== 'connecting') && /certificate/.test(f!.member('unverified').error)) || leaked(), 'each refused or failing (or a leak)');
    assert.deepEqual([plain.connections, plain.bytes], [0, ''], 'nothing sent over plain HTTP');
    assert.deepEqual([stranger.seen.handshakes, stranger.seen.requests], [0, []], 'no TLS handshake completed with the unverifiable endpoint');
    assert.deepEqual(good.seen.requests, [], 'no request at the endpoint the refused Clusters name');
    for (const n of [...refused, 'unverified']) assert.equal(view.reading(n, WORKLOAD), undefined, n);
    assert.match(f.member('pull').error, /^Cluster pull has syncMode Pull: karmada\.memberAccess direct reads Push clusters only/);
    assert.match(f.member('plain').error, /^Cluster plain's spec\.apiEndpoint "http:\/\/127\.0\.0\.1:\d+" is not https:\/\/: karmada\.memberAccess direct sends no token without verified TLS/);
    assert.match(f.member('thief').error, /^Cluster thief's spec\.secretRef names karmada-cluster\/good, not a Secret named thief/);
    assert.match(f.member('good').error, /^Cluster good's spec\.secretRef names karmada-cluster\/elsewhere, not a Secret named good/);
    assert.match(f.member('unverified').error, /^https:\/\/127\.0\.0\.1:\d+: TLS not verified with the system's roots \(Secret karmada-cluster\/unverified has no caBundle\): unable to verify the first certificate/);
    assert.deepEqual(karmada.requests.filter((r) => r.includes('/secrets')), ['GET /api/v1/namespaces/karmada-cluster/secrets/unverified'], 'Secrets read by name, only those allowed');
  });

  it('a changed secretRef is picked up with the endpoint unchanged: its own token, over verified TLS', async () => {
    const { view, until, member } = f!;
    karmada.put(cluster('good', { apiEndpoint: `https://127.0.0.1:${good.port}/good` }));
    await until(() => member('good').healthy, 'good read');
    assert.ok(view.reading('good', WORKLOAD));
    assert.deepEqual([...new Set(good.seen.requests.map((r) => `${r.path.split(/\/apis?\//)[0]} ${r.auth}`))], ['/good Bearer token-of-good']);
  });

  it('a rotated token in the member\'s Secret, the Cluster unchanged: read with the new one from then on', async () => {
    const { until } = f!;
    karmada.put(secret('good', { token: b64('rotated-token'), caBundle: b64(good.caBundle) }));
    const auths = () => new Set(good.seen.requests.map((r) => r.auth));
    await until(() => auths().has('Bearer rotated-token'), 'the rotated token used');
    const seen = good.seen.requests.length;
    await until(() => good.seen.requests.length > seen + 1, 'more requests');
    assert.deepEqual([...new Set(good.seen.requests.slice(seen).map((r) => r.auth))], ['Bearer rotated-token'], 'the old token is not sent again');
  });
});
