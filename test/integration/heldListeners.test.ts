// No listener can be held (issue 71, item 4): pods on the network hold sockets in every phase of a
// connection (TLS handshake not begun, handshake done but silent, headers trickled, body trickled,
// idle keep-alive refreshed) from several addresses (127.0.0.x are all loopback on Linux), at each
// source's cap, until the webhook and probe listeners are full, reconnecting whenever closed;
// kube-apiserver's reviews and kubelet's probes, each on a new connection, are still answered. Each
// phase ends at its limit (the defaults of config `http`, on the fake clock), not a moment before.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { after, describe, it } from 'node:test';
import { Hono } from 'hono';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { house } from '../../src/house.js';
import { trustedCaller } from '../../src/http/callers.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { probeRoutes } from '../../src/server/adminRoutes.js';
import type { DropReason } from '../../src/server/connectionGuard.js';
import { listen, type Listener } from '../../src/server/listen.js';
import { silent } from '../support/app.js';
import { nodes, storeOf } from '../support/builders.js';
import { servingFiles } from '../support/clientCertificates.js';
import { turns, waitFor } from '../support/wait.js';

const DEFAULTS = parseConfig({}).http;
// Small caps so that a few sockets fill a listener (5 addresses x 8 the webhook's, 8 x 5 the probes'); every time limit is the shipped default.
const LIMITS = { ...DEFAULTS, maxConnections: 40, maxConnectionsPerSource: 8 };
const PROBE_LIMITS = { ...LIMITS, maxConnectionsPerSource: 5 };
const open: Listener[] = [];
after(async () => { for (const l of open) await l.close(0); });

type Phase = 'handshake' | 'silent' | 'headers' | 'body' | 'idle';
const REQUEST = { webhook: 'GET /admission/pods HTTP/1.1\r\nHost: x\r\n\r\n', probe: 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' };

interface Held { phase: Phase; socket: net.Socket; closed: boolean; answers: number }

/** One hostile socket from `source` brought to `phase` (`secure`: over TLS; `handshake` never starts it). */
async function hold(port: number, phase: Phase, source: string, secure: boolean, request: string): Promise<Held> {
  const raw = net.connect({ host: '127.0.0.1', port, localAddress: source });
  const socket = secure && phase !== 'handshake' ? tls.connect({ socket: raw, rejectUnauthorized: false }) : raw;
  const h: Held = { phase, socket, closed: false, answers: 0 };
  socket.on('error', () => {});
  socket.on('close', () => (h.closed = true));
  socket.on('data', (d: Buffer) => (h.answers += d.toString().split('HTTP/1.1 ').length - 1));
  await Promise.race([once(socket, secure && phase !== 'handshake' ? 'secureConnect' : 'connect'), once(socket, 'close')]);
  if (h.closed) return h;
  if (phase === 'headers') socket.write('POST /admission/pods HTTP/1.1\r\nHost: x\r\nX-Slow: a');
  if (phase === 'body') socket.write('POST /admission/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
  if (phase === 'idle') {
    socket.write(request);
    await waitFor(() => h.answers === 1 || h.closed, 'the keep-alive request answered');
  }
  return h;
}

/** Sockets in every phase from one source per phase (two for each on the probe port), each reopened when closed, until `stop`. */
function attack(port: number, secure: boolean, request: string) {
  const phases: Phase[] = secure ? ['handshake', 'silent', 'headers', 'body', 'idle'] : ['silent', 'headers', 'body', 'idle'];
  const sources = phases.flatMap((p, i) => (secure ? [[p, i]] : [[p, 2 * i], [p, 2 * i + 1]]) as [Phase, number][]);
  const perSource = LIMITS.maxConnections / sources.length;
  let stopped = false;
  let reopened = 0;
  const live = new Set<Held>();
  const keep = async (phase: Phase, source: string) => {
    while (!stopped && reopened < 2_000) {
      const h = await hold(port, phase, source, secure, request);
      live.add(h);
      if (!h.closed) await once(h.socket, 'close');
      live.delete(h);
      reopened++;
    }
  };
  for (const [phase, i] of sources) for (let k = 0; k < perSource; k++) void keep(phase, `127.0.0.${i + 2}`);
  return {
    live,
    stop() {
      stopped = true;
      for (const h of live) h.socket.destroy();
    },
  };
}

/** A GET or POST on a new connection from 127.0.0.1 (kube-apiserver's, kubelet's address): its status and body. */
function ask(url: string, path: string, servingCa?: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const req = (u.protocol === 'https:' ? https : http).request({
      host: u.hostname, port: u.port, path: u.pathname, method: body === undefined ? 'GET' : 'POST', agent: false, ca: servingCa,
      headers: { 'content-type': 'application/json' },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const review = (uid: string) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE', namespace: 'default',
    object: { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
});

/** The webhook listener (TLS, the admission routes, every caller trusted) and the probe listener, with LIMITS on `clock`. */
async function listeners(clock: ReturnType<typeof fakeClock>) {
  const store = storeOf(nodes(['zone-a'], 1));
  const metrics = createMetrics();
  const source = memorySource(store, 'test');
  const h = house({ config: parseConfig({}), source, actuator: memoryActuator(store, silent, metrics), metrics, log: silent, clock, leading: () => true });
  const { files, servingCa } = servingFiles();
  const drops: Record<'webhook' | 'probe', DropReason[]> = { webhook: [], probe: [] };
  const webhook = await listen(h.webhooks(1 << 20, trustedCaller), '127.0.0.1:0', { tls: files, limits: LIMITS, clock, onDrop: (r) => drops.webhook.push(r) });
  const probe = await listen(probeRoutes({ source, serving: () => true }), '127.0.0.1:0', { limits: PROBE_LIMITS, clock, onDrop: (r) => drops.probe.push(r) });
  open.push(webhook, probe);
  return { webhook, probe, servingCa, drops };
}

describe('sockets held in every phase from several addresses, reconnecting, until the listeners are full', () => {
  it('kube-apiserver\'s reviews and kubelet\'s probes on new connections are answered every time; each took the place of a socket of the source holding the most', async () => {
    const clock = fakeClock();
    const { webhook, probe, servingCa, drops } = await listeners(clock);
    const attacks = [attack(webhook.port, true, REQUEST.webhook), attack(probe.port, false, REQUEST.probe)];
    await waitFor(() => attacks.every((a) => a.live.size === LIMITS.maxConnections), 'both listeners full of held sockets');
    await waitFor(() => attacks.every((a) => [...a.live].every((h) => h.phase !== 'idle' || h.answers === 1)), 'the keep-alive ones answered once');
    // One more socket from an address at its cap (the keep-alive ones': answered, so surely counted) is closed at once.
    for (const [l, which, source] of [[webhook, 'webhook', '127.0.0.6'], [probe, 'probe', '127.0.0.8']] as const) {
      const extra = await hold(l.port, 'handshake', source, false, '');
      await waitFor(() => extra.closed, `${which}: a ninth socket from ${source} closed`);
      assert.deepEqual(drops[which], ['source']);
    }
    for (let i = 0; i < 10; i++) {
      const r = await ask(webhook.url, '/admission/pods', servingCa, review(`review-${i}`));
      assert.equal(r.status, 200, r.text);
      assert.equal(JSON.parse(r.text).response.uid, `review-${i}`);
      const p = await ask(probe.url, '/healthz');
      assert.equal(p.status, 200, p.text);
      // The attack goes on: every socket closed is reopened and the listener is full again before the next call.
      await waitFor(() => attacks.every((a) => a.live.size === LIMITS.maxConnections), 'the attackers back at the cap');
    }
    for (const which of ['webhook', 'probe'] as const) {
      assert.equal(drops[which].filter((r) => r === 'displaced').length, 10, `${which}: one held socket closed for each new caller`);
      assert.deepEqual(drops[which].filter((r) => r !== 'displaced' && r !== 'full' && r !== 'source'), [], `${which}: no phase timed out (no time passed)`);
    }
    for (const a of attacks) a.stop();
  });
});

describe('each phase of a connection ends at its limit (config `http` defaults, fake time)', () => {
  it('handshake 5 s, headers 5 s (trickled or not), body 10 s (trickled), idle keep-alive 15 s after each answer, a request 30 s whole', async () => {
    const clock = fakeClock();
    const { webhook, drops } = await listeners(clock);
    let hung = 0;
    const hanging = await listen(new Hono().get('/hang', () => { hung++; return new Promise<Response>(() => {}); }), '127.0.0.1:0',
      { limits: LIMITS, clock, onDrop: (r) => drops.probe.push(r) });
    open.push(hanging);
    const held = {
      handshake: await hold(webhook.port, 'handshake', '127.0.0.2', true, ''),
      silent: await hold(webhook.port, 'silent', '127.0.0.3', true, ''),
      headers: await hold(webhook.port, 'headers', '127.0.0.4', true, ''),
      body: await hold(webhook.port, 'body', '127.0.0.5', true, ''),
      idle: await hold(webhook.port, 'idle', '127.0.0.6', true, REQUEST.webhook),
      request: await hold(hanging.port, 'silent', '127.0.0.7', false, ''),
    };
    held.request.socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => hung === 1, 'the hanging request arrived');
    const closed = () => Object.entries(held).filter(([, h]) => h.closed).map(([k]) => k).sort();
    // Fake time in steps of a second, a byte trickled into the headers and the body at each.
    let t = 0;
    const until = async (ms: number) => {
      while (t < ms) {
        const step = Math.min(1000 - (t % 1000), ms - t);
        await clock.advance(step);
        t += step;
        if (t % 1000 === 0) for (const h of [held.headers, held.body]) if (!h.closed) h.socket.write('a');
      }
      await turns(50);
    };
    // The phases closed so far; each next ones are still open 1 ms before their limit and closed at it.
    const ended: string[] = [];
    const at = async (ms: number, phases: string[]) => {
      await until(ms - 1);
      assert.deepEqual(closed(), [...ended].sort(), `nothing more closed at ${ms - 1} ms`);
      await until(ms);
      ended.push(...phases);
      await waitFor(() => closed().length === ended.length, `${phases.join(', ')} closed at ${ms} ms`);
      assert.deepEqual(closed(), [...ended].sort());
    };
    await at(5_000, ['handshake', 'silent', 'headers']);
    assert.deepEqual(drops.webhook.sort(), ['handshake', 'headers', 'headers']);
    await at(10_000, ['body']);
    assert.equal(drops.webhook.filter((r) => r === 'body').length, 1);
    // The keep-alive socket asks again at 10 s: it may idle 15 s from that answer.
    held.idle.socket.write(REQUEST.webhook);
    await waitFor(() => held.idle.answers === 2, 'the second request answered');
    await at(25_000, ['idle']);
    assert.equal(drops.webhook.length, 4, 'an idle keep-alive socket closed is not a drop');
    await at(30_000, ['request']);
    assert.deepEqual(drops.probe, ['request']);
  });
});
