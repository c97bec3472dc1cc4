// A listener's connection cap (http.maxConnections) on a real port: a connection past it is
// closed at once and counted, so a client's retries (kube-apiserver's webhook calls) show in the metrics.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { listen } from '../../src/server/listen.js';

describe('a listener at http.maxConnections', () => {
  it('closes the next connection at once and says so; the open one is still served', async () => {
    const app = new Hono().get('/', (c) => c.text('ok'));
    let drops = 0;
    let accepted = 0;
    const l = await listen(app, '127.0.0.1:0', {
      limits: { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000, maxConnections: 1 },
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
    await l.close(Date.now());
  });
});
