import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { kubeApiClient } from '../../src/cluster/apiClient.js';
import { POD_KIND } from '../../src/cluster/kinds.js';
import { tokenAccess } from '../../src/cluster/kubeconfig.js';
import { apiListerWatcher } from '../../src/cluster/listerWatcher.js';
import { Reflector } from '../../src/cluster/reflector.js';
import { TooLarge } from '../../src/cluster/responseLimits.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { fakeClock } from '../../src/common/clock.js';
import { silent } from '../support/app.js';
import { pod } from '../support/builders.js';
import { onFakeTime, waitFor } from '../support/wait.js';

// Answers larger than their limit, from a raw API server on 127.0.0.1: zonekeeper stops reading
// (the server gets only so far before the socket closes), names the limit and its setting, and
// reads the next answer as usual.

const MiB = 1024 * 1024;
/** What a hostile or broken server would send whole: far past every limit here. */
const HUGE = 256 * MiB;
const PAD = Buffer.alloc(64 * 1024, 'x'.charCodeAt(0));

type Answer = (url: URL, res: http.ServerResponse) => unknown;

/** How far each streamed answer got before its socket closed. */
interface Streamed { path: string; written: number; done: Promise<number> }

/** Writes `head`, then padding up to `total` bytes as the socket drains; resolves with the bytes written once the answer ends or its socket closes. */
function streamed(res: http.ServerResponse, head: string, total: number, headers: http.OutgoingHttpHeaders = {}): Promise<number> {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  let closed = false;
  const gone = new Promise<void>((resolve) => res.once('close', () => { closed = true; resolve(); }));
  return (async () => {
    let written = 0;
    res.write(head);
    written += head.length;
    while (written < total && !closed) {
      written += PAD.length;
      if (!res.write(PAD)) await Promise.race([new Promise((r) => res.once('drain', r)), gone]);
    }
    if (!closed) res.end();
    await gone;
    return written;
  })();
}

describe('answers larger than their limit (issue 71)', () => {
  const server = http.createServer((req, res) => void answer(new URL(req.url!, 'http://x'), res));
  let answer: Answer = (_, res) => res.writeHead(404).end();
  let url = '';
  const streams: Streamed[] = [];
  const stream = (url: URL, res: http.ServerResponse, head: string, headers?: http.OutgoingHttpHeaders) => {
    const s: Streamed = { path: url.pathname + url.search, written: 0, done: streamed(res, head, HUGE, headers) };
    void s.done.then((n) => { s.written = n; });
    streams.push(s);
  };
  const podList = (names: string[], rv = '10') => JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items: names.map((n) => pod(n, undefined)) });

  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a list page past its limit: the read stops early, the error names the limit and its setting; the next page is read as usual', async () => {
    const lw = apiListerWatcher(kubeApiClient(tokenAccess(url, 't', undefined)), POD_KIND);
    const limit = { bytes: MiB, setting: 'cluster.listPageMaxBytes' };
    answer = (u, res) => stream(u, res, '{"kind":"PodList","metadata":{},"items":[');
    await assert.rejects(lw.list(500, '', new AbortController().signal, limit), (err: Error) => {
      assert.ok(err instanceof TooLarge);
      assert.match(err.message, /^the answer to GET \/api\/v1\/pods is larger than cluster\.listPageMaxBytes \(1 MiB\): not read further, the connection closed$/);
      return true;
    });
    const written = await streams.at(-1)!.done;
    assert.ok(written < 32 * MiB, `the server wrote ${(written / MiB).toFixed(1)} MiB of ${HUGE / MiB} before the socket closed`);
    answer = (_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(podList(['p-0']));
    const page = await lw.list(500, '', new AbortController().signal, limit);
    assert.equal(page.status, 200);
    assert.equal(JSON.parse(Buffer.from(page.body as Uint8Array).toString()).items[0].metadata.name, 'p-0');
  });

  it('any other answer: cluster.responseMaxBytes; one announced larger is not read at all', async () => {
    const api = kubeApiClient(tokenAccess(url, 't', undefined), { responseMaxBytes: MiB });
    answer = (u, res) => stream(u, res, '{', { 'content-length': String(HUGE) });
    await assert.rejects(api.request('GET', '/api/v1/namespaces/default/pods/big'),
      /the answer to GET \/api\/v1\/namespaces\/default\/pods\/big \(268435456 bytes announced\) is larger than cluster\.responseMaxBytes \(1 MiB\)/);
    const written = await streams.at(-1)!.done;
    assert.ok(written < 32 * MiB, `the server wrote ${(written / MiB).toFixed(1)} MiB before the socket closed`);
    answer = (u, res) => stream(u, res, '{');
    await assert.rejects(api.request('GET', '/version'), /larger than cluster\.responseMaxBytes \(1 MiB\)/, 'without a length too');
    answer = (_, res) => res.writeHead(200).end('{"gitVersion":"v1.36.0"}');
    assert.deepEqual(await api.request('GET', '/version'), { status: 200, body: '{"gitVersion":"v1.36.0"}' });
  });

  it('a reflector: a page too large lists again at half the page size; an event too large closes the watch, relists, and goes on (fake time)', async () => {
    const clock = fakeClock();
    const asked: string[] = [];
    let watches = 0;
    const held: http.ServerResponse[] = [];
    answer = (u, res) => {
      asked.push(u.searchParams.has('watch') ? `watch ${u.searchParams.get('resourceVersion')}` : `list ${u.searchParams.get('limit')}`);
      if (!u.searchParams.has('watch')) {
        // A page of 4 is too large; of 2, it is the whole list (the second time with p-1 too).
        if (u.searchParams.get('limit') === '4') return stream(u, res, '{"kind":"PodList","metadata":{},"items":[');
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(podList(watches === 0 ? ['p-0'] : ['p-0', 'p-1'], watches === 0 ? '10' : '20'));
      }
      // The first watch sends one event line that never ends; the second, an event, and stays open.
      if (watches++ === 0) return stream(u, res, '{"type":"ADDED","object":{"metadata":{"name":"');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod('p-2', undefined) })}\n`);
      held.push(res);
    };
    const store = new ClusterStore();
    const opts = {
      pageSize: 4, watchTimeoutSeconds: 60, silenceSeconds: 600, backoffInitialMs: 500, backoffMaxMs: 500, maxStalenessSeconds: 600,
      listPageMaxBytes: 2 * MiB, watchEventMaxBytes: MiB,
    };
    const r = new Reflector(apiListerWatcher(kubeApiClient(tokenAccess(url, 't', undefined)), POD_KIND), POD_KIND, store, opts, silent, undefined, clock);
    r.start();
    try {
      await waitFor(() => r.status().restarts.error === 1, 'the first page refused');
      assert.match(r.status().lastError, /^list pods: a page of 4 is larger than cluster\.listPageMaxBytes \(2 MiB\): not read further, the connection closed; relisting 2 a page \(cluster\.listPageSize 4 is where it starts\)$/);
      assert.ok(await streams.at(-1)!.done < 32 * MiB, 'the page was not read whole');
      await onFakeTime(clock, () => r.status().restarts.error === 2, 'listed at 2 a page, then the watch\'s event refused', 2000);
      assert.deepEqual([...store.keys('pods')], ['default/p-0']);
      assert.match(r.status().lastError, /^watch pods: an event is larger than cluster\.watchEventMaxBytes \(1 MiB\): not read further, the connection closed$/);
      const written = await streams.at(-1)!.done;
      assert.ok(written < 32 * MiB, `the server wrote ${(written / MiB).toFixed(1)} MiB of the event before the socket closed`);
      await onFakeTime(clock, () => [...store.keys('pods')].length === 3, 'relisted (p-1) and watching again (p-2)', 2000);
      assert.deepEqual([...store.keys('pods')].sort(), ['default/p-0', 'default/p-1', 'default/p-2']);
      assert.deepEqual(asked, ['list 4', 'list 2', 'watch 10', 'list 2', 'watch 20'], 'relisted after the lost event, at the smaller page size');
      assert.equal(r.status().watching, true);
    } finally {
      await r.stop();
      for (const res of held) res.end();
    }
  });
});
