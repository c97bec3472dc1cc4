// A listener on a real port: a connection past its cap (http.maxConnections) is closed at once
// and counted, so a client's retries (kube-apiserver's webhook calls) show in the metrics; its TLS
// files are read again on a (fake) timer, as cert-manager renews them in place.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { renewed } from '../../src/controllers/webhookPki.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { listen, TLS_RELOAD_MS } from '../../src/server/listen.js';
import { testApp } from '../support/app.js';
import { nodes, storeOf } from '../support/builders.js';
import { turns, waitFor } from '../support/wait.js';

describe('a listener at http.maxConnections', () => {
  it('closes the next connection at once and says so; the open one is still served', async () => {
    const app = new Hono().get('/', (c) => c.text('ok'));
    let drops = 0;
    let accepted = 0;
    const l = await listen(app, '127.0.0.1:0', {
      limits: { ...parseConfig({}).http, maxConnections: 1 },
      onConnection: () => accepted++, onDrop: () => drops++,
    });
    const first = net.connect(l.port, '127.0.0.1');
    await once(first, 'connect');
    // The server counts the first before it can refuse a second.
    while (accepted === 0) await new Promise((r) => setImmediate(r));
    const second = net.connect(l.port, '127.0.0.1');
    second.on('error', () => {});
    await once(second, 'close');
    assert.equal(drops, 1);
    first.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    first.on('data', (c: Buffer) => (text += c.toString()));
    await once(first, 'end');
    assert.match(text, /^HTTP\/1\.1 200[\s\S]*ok$/);
    assert.equal(accepted, 1);
    await l.close(0);
  });
});

describe('a client that closes its connection before its body arrives', () => {
  for (const [framing, head] of [
    ['Content-Length', 'Content-Length: 1000\r\n\r\n{"Pod":'],
    ['chunked', 'Transfer-Encoding: chunked\r\n\r\n7\r\n{"Pod":\r\n'],
  ] as const) {
    it(`${framing}: counted as a 499 of its verb, not an internal error; the listener keeps serving`, async () => {
      const t = testApp(storeOf(nodes(['zone-a'], 1)));
      let arrived = 0;
      const app = new Hono().use(async (_c, next) => { arrived++; await next(); }).route('/', t.extenderApp);
      const l = await listen(app, '127.0.0.1:0');
      const sock = net.connect(l.port, '127.0.0.1');
      sock.on('error', () => {});
      await once(sock, 'connect');
      sock.write(`POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${head}`);
      await waitFor(() => arrived === 1, 'the request handed to the routes');
      sock.destroy();
      await waitFor(async () => /zonekeeper_bad_requests_total\{verb="filter",status="499"\} 1/.test(await t.metrics.registry.metrics()), 'the closed request counted', 2_000);
      assert.doesNotMatch(await t.metrics.registry.metrics(), /zonekeeper_internal_errors_total\{/);
      const res = await fetch(`${l.url}/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      assert.equal(res.status, 400);
      await l.close(0);
    });
  }
});

describe('listeners closed together (shutdown, fake time)', () => {
  it('share one deadline: in-flight requests on each are waited for until it, then dropped together, not one grace per listener', async () => {
    const clock = fakeClock();
    const app = new Hono().post('/', async (c) => c.text(await c.req.text()));
    const listeners = await Promise.all([listen(app, '127.0.0.1:0', { clock }), listen(app, '127.0.0.1:0', { clock })]);
    // Each client declares a body it never finishes sending: a request in flight.
    const closed = [false, false];
    await Promise.all(listeners.map(async (l, i) => {
      const sock = net.connect(l.port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('close', () => { closed[i] = true; });
      await once(sock, 'connect');
      sock.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"Pod":');
    }));
    let done = false;
    void Promise.all(listeners.map((l) => l.close(2000))).then(() => { done = true; });
    await clock.advance(1999);
    await turns(2_000);
    assert.deepEqual([closed, done], [[false, false], false], 'both requests still waited for just before the deadline');
    await clock.advance(1);
    await waitFor(() => done && closed.every((c) => c), 'both closed at the deadline');
  });
});

describe('a TLS listener from files (cert-manager renews a mounted Secret in place)', () => {
  it('serves the files as they are after each reload interval; a half-written pair keeps the old certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-tls-'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCAFile: '' };
    const write = (pki: { cert: string; key: string }) => {
      writeFileSync(files.certFile, pki.cert);
      writeFileSync(files.keyFile, pki.key);
    };
    // Valid now by the system's time: the TLS client checks it against that.
    const first = renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 2);
    const second = renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 2);
    write(first);
    const clock = fakeClock();
    const reloads: (string | undefined)[] = [];
    const l = await listen(new Hono().get('/', (c) => c.text('ok')), '127.0.0.1:0', { tls: files, clock, onTlsReload: (err) => reloads.push(err?.message) });
    const served = async () => {
      const socket = tls.connect({ host: '127.0.0.1', port: l.port, rejectUnauthorized: false });
      await once(socket, 'secureConnect');
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.destroy();
      return fingerprint;
    };
    const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
    assert.equal(await served(), fingerprint(first.cert));
    // A certificate without its key (a renewal caught half-way): refused, the old one stays.
    writeFileSync(files.certFile, second.cert);
    await clock.advance(TLS_RELOAD_MS);
    await waitFor(() => reloads.length === 1, 'the reload ran');
    assert.ok(reloads[0], 'reported as an error');
    assert.equal(await served(), fingerprint(first.cert));
    write(second);
    await clock.advance(TLS_RELOAD_MS);
    await waitFor(() => reloads.length === 2, 'the reload ran');
    assert.equal(reloads[1], undefined);
    assert.equal(await served(), fingerprint(second.cert));
    await l.close(0);
    rmSync(dir, { recursive: true });
  });
});

describe('idle sockets from one source (a pod that never sends a ClientHello)', () => {
  it('take at most maxConnectionsPerSource; a real review from another address still gets through; they are closed at the handshake timeout', async () => {
    const t = testApp(storeOf(nodes(['zone-a'], 1)));
    const pki = renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 2);
    const dir = mkdtempSync(join(tmpdir(), 'zk-idle-'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCAFile: '' };
    writeFileSync(files.certFile, pki.cert);
    writeFileSync(files.keyFile, pki.key);
    const clock = fakeClock();
    let drops = 0;
    const l = await listen(t.extenderApp, '127.0.0.1:0', {
      tls: files, clock, onDrop: () => drops++,
      limits: { ...parseConfig({}).http, maxConnections: 100, maxConnectionsPerSource: 50 },
    });
    // 200 sockets from 127.0.0.2 that never start TLS: twice the listener's cap.
    const idle: net.Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 200; i++) {
      const s = net.connect({ port: l.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      const at = closed.push(false) - 1;
      s.on('error', () => {});
      s.on('close', () => (closed[at] = true));
      idle.push(s);
    }
    await waitFor(() => closed.filter(Boolean).length === 150, '150 past the source\'s 50 closed at once');
    assert.equal(drops, 150);
    const held = closed.map((c, i) => (c ? -1 : i)).filter((i) => i >= 0);
    // kube-apiserver, from its own address: served.
    const answer = await new Promise<number>((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1', port: l.port, path: '/filter', method: 'POST', ca: pki.caBundle, agent: false, headers: { 'content-type': 'application/json' },
      },
      (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
      req.on('error', reject);
      req.end(JSON.stringify({ Pod: { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: {} }, NodeNames: ['node-a-1'] }));
    });
    assert.equal(answer, 200);
    assert.ok(held.every((i) => !closed[i]), 'the 50 are still open before the timeout');
    await clock.advance(5_000);
    await waitFor(() => held.every((i) => closed[i]), 'the 50 idle sockets closed at the handshake timeout');
    assert.equal(drops, 200);
    await l.close(0);
    rmSync(dir, { recursive: true });
  });
});
