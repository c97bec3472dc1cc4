import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { POD_KIND } from '../../src/cluster/kinds.js';
import { continueAhead, Reflector, type ListerWatcher } from '../../src/cluster/reflector.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { pod } from '../support/builders.js';
import { silent } from '../support/app.js';

const OPTS = { pageSize: 2, watchTimeoutSeconds: 60, silenceSeconds: 60, backoffInitialMs: 10, backoffMaxMs: 10, maxStalenessSeconds: 60 };

/** Pages served from memory; `head` is text placed before the list's metadata. */
function pagedLister(pages: Record<string, { names: string[]; next: string; head?: string }>) {
  const asked: string[] = [];
  const cancelled: string[] = [];
  const lw: ListerWatcher = {
    list(_limit, token, signal) {
      asked.push(token);
      signal.addEventListener('abort', () => cancelled.push(token), { once: true });
      const page = pages[token];
      if (!page) return Promise.resolve({ status: 410, body: '{"kind":"Status","code":410}' });
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
    const r = new Reflector(lw, POD_KIND, store, OPTS, silent);
    r.start();
    for (let i = 0; i < 100 && !r.status().synced; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    await r.stop();
    assert.equal(r.status().synced, true);
    assert.deepEqual([...store.keys('pods')].sort(), ['default/p-0', 'default/p-1', 'default/p-2', 'default/p-3', 'default/p-4']);
    assert.deepEqual(asked, ['', 'two', 'bogus', 'three'], 'each page asked ahead; the wrong guess too');
    assert.ok(cancelled.includes('bogus'), 'the wrong guess is cancelled');
  });
});
