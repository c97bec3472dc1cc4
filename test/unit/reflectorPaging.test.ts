import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { POD_KIND } from '../../src/cluster/kinds.js';
import { inlinePages, type PageDecoder } from '../../src/cluster/podPages.js';
import { continueAhead, type ListerWatcher } from '../../src/cluster/listerWatcher.js';
import { Reflector } from '../../src/cluster/reflector.js';
import { slimPod } from '../../src/cluster/convert.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { pod } from '../support/builders.js';
import { silent } from '../support/app.js';
import { turns, waitFor } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

const OPTS = { pageSize: 2, watchTimeoutSeconds: 60, silenceSeconds: 60, backoffInitialMs: 10, backoffMaxMs: 10, maxStalenessSeconds: 60 };

/** Pages served from memory; `head` is text placed before the list's metadata. */
function pagedLister(pages: Record<string, { names: string[]; next: string; head?: string; status?: number }>) {
  const asked: string[] = [];
  const cancelled: string[] = [];
  const lw: ListerWatcher = {
    list(_limit, token, signal) {
      asked.push(token);
      signal.addEventListener('abort', () => cancelled.push(token), { once: true });
      const page = pages[token];
      if (!page) return Promise.resolve({ status: 410, body: '{"kind":"Status","code":410}' });
      if (page.status) return Promise.resolve({ status: page.status, body: `{"kind":"Status","code":${page.status},"message":"refused"}` });
      const items = JSON.stringify(page.names.map((n) => pod(n, undefined)));
      const metadata = JSON.stringify({ resourceVersion: '7', ...(page.next ? { continue: page.next } : {}) });
      return Promise.resolve({ status: 200, body: `{"kind":"PodList",${page.head ?? ''}"metadata":${metadata},"items":${items}}` });
    },
    // A watch that stays open until the reflector stops.
    watch: (_rv, _timeout, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })),
  };
  return { lw, asked, cancelled };
}

describe('list paging', () => {
  it('reads the continue token from the head of a page, and only from there', () => {
    assert.equal(continueAhead('{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"eyJ2IjoibWV0YSJ9"},"items":[]}'), 'eyJ2IjoibWV0YSJ9');
    assert.equal(continueAhead('{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"continue":"x"}]}'), undefined, 'last page');
    assert.equal(continueAhead('{"items":[],"metadata":{"continue":"later"}}'), undefined, 'metadata after the items: wait for the parse');
    assert.equal(continueAhead(`{"pad":"${'x'.repeat(5000)}","items":[]}`), undefined, 'no metadata near the head');
    assert.equal(continueAhead(Buffer.from('{"metadata":{"continue":"b2s"},"items":[]}')), 'b2s', 'from bytes too');
  });

  it('asks for the next page before parsing this one, and drops a guess the parsed page contradicts', async () => {
    const { lw, asked, cancelled } = pagedLister({
      '': { names: ['p-0', 'p-1'], next: 'two' },
      // A stray "continue" key ahead of the metadata: the guess is wrong, the parse decides.
      two: { names: ['p-2', 'p-3'], next: 'three', head: '"x":{"continue":"bogus"},' },
      three: { names: ['p-4'], next: '' },
    });
    const store = new ClusterStore();
    const r = new Reflector(lw, POD_KIND, store, OPTS, silent, undefined, fakeClock());
    r.start();
    await waitFor(() => r.status().synced, 'synced');
    await r.stop();
    assert.equal(r.status().synced, true);
    assert.deepEqual([...store.keys('pods')].sort(), ['default/p-0', 'default/p-1', 'default/p-2', 'default/p-3', 'default/p-4']);
    assert.deepEqual(asked, ['', 'two', 'bogus', 'three'], 'each page asked ahead; the wrong guess too');
    assert.ok(cancelled.includes('bogus'), 'the wrong guess is cancelled');
  });

  /** Pages named p0 … p(n-1), two pods each, each naming the next in its head. */
  const chain = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [i === 0 ? '' : `p${i}`, { names: [`a-${i}`, `b-${i}`], next: i + 1 < n ? `p${i + 1}` : '' }]));
  const synced = (r: Reflector) => waitFor(() => r.status().synced || !!r.status().lastError, 'synced, or failed');

  it('keeps at most three pages decoding ahead, and stores them in order', async () => {
    const { lw, asked } = pagedLister(chain(8));
    const inline = inlinePages((raw) => slimPod(raw));
    let decoding = 0, most = 0;
    // A decoder slower than the lister: pages pile up unless the reflector bounds them.
    const slow: PageDecoder = async (body) => {
      most = Math.max(most, ++decoding);
      await turns(5);
      decoding--;
      return inline(body);
    };
    const store = new ClusterStore();
    const order: string[] = [];
    store.onPod((_type, p) => order.push(p.name));
    const r = new Reflector(lw, POD_KIND, store, OPTS, silent, undefined, fakeClock(), slow);
    r.start();
    await synced(r);
    await r.stop();
    assert.equal(r.status().synced, true);
    assert.equal(most, 3, 'three pages decode at once, no more');
    assert.deepEqual(order, Array.from({ length: 8 }, (_, i) => [`a-${i}`, `b-${i}`]).flat());
    assert.deepEqual(asked, ['', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  });

  it('a page refused after a right guess fails the list', async () => {
    const refused = pagedLister({ ...chain(3), p2: { names: [], next: '', status: 403 } });
    const store = new ClusterStore();
    const r = new Reflector(refused.lw, POD_KIND, store, OPTS, silent, undefined, fakeClock());
    r.start();
    await synced(r);
    await r.stop();
    assert.equal(r.status().synced, false);
    assert.equal(r.status().lastErrorStatus, 403);
    assert.match(r.status().lastError, /list pods: 403 refused/);
  });
});
