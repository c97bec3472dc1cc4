import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inlinePages } from '../../src/cluster/podPages.js';
import { slimPod } from '../../src/cluster/convert.js';
import { pod } from '../support/builders.js';
import { fakeClock } from '../../src/common/clock.js';

// The worker thread loads compiled modules only (npm test builds dist/ first): the test drives
// the decoder the served process uses.
type PodPages = typeof import('../../src/cluster/podPages.js');
const compiled = (await import(new URL('../../dist/cluster/podPages.js', import.meta.url).href)) as PodPages;

const TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

function page(names: string[], next: string): string {
  const items = names.map((n) => ({ ...pod(n, { kind: 'StatefulSet', name: 'db' }, { nodeName: 'node-a-1' }), spec: { nodeName: 'node-a-1', tolerations: TOLERATIONS } }));
  return JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9', continue: next }, items });
}

describe('pod pages decoded off the event loop', () => {
  it('the compiled decoder runs off the main thread there', () => {
    assert.equal(compiled.offThreadAvailable(), true);
  });

  it('decodes a page as the inline decoder does, its repeated strings and lists shared', async () => {
    const decode = compiled.offThreadPodPages();
    try {
      const body = page(['db-0', 'db-1', 'db-2'], 'more');
      const off = await decode(body);
      const inline = await inlinePages((raw) => slimPod(raw))(body);
      assert.deepEqual(off, inline);
      assert.equal(off.continue, 'more');
      assert.equal(off.resourceVersion, '9');
      const [a, b] = off.items as ReturnType<typeof slimPod>[];
      assert.equal(a!.tolerations.length, 2);
      assert.equal(a!.tolerations, b!.tolerations, 'one list for equal tolerations, as slimPod keeps them');
      assert.ok(Object.isFrozen(a!.tolerations));
      assert.equal(a!.claims, b!.claims, 'the shared empty claim list');
    } finally {
      await decode.close();
    }
  });

  it('takes a page as bytes: bytes that own their buffer move to the thread, a slice is copied', async () => {
    const decode = compiled.offThreadPodPages();
    try {
      const body = page(['db-0', 'db-1'], '');
      const inline = await inlinePages((raw) => slimPod(raw))(body);
      const owned = new Uint8Array(Buffer.from(body));
      assert.deepEqual(await decode(owned), inline);
      assert.equal(owned.byteLength, 0, 'moved, not copied');
      const whole = Buffer.from(`xx${body}`);
      const slice = whole.subarray(2);
      assert.deepEqual(await decode(slice), inline);
      assert.equal(slice.byteLength, Buffer.byteLength(body), 'a slice stays with its owner');
    } finally {
      await decode.close();
    }
  });

  it('a malformed page is an error, and the decoder keeps working', async () => {
    const decode = compiled.offThreadPodPages();
    try {
      await assert.rejects(decode('{"kind":"PodList","items":[{"metadata":'), /JSON/);
      await assert.rejects(decode('{"items":[null]}'), /metadata|null/);
      const ok = await decode(page(['db-0'], ''));
      assert.equal(ok.items.length, 1);
      assert.equal(ok.continue, '');
    } finally {
      await decode.close();
    }
  });

  it('closing fails what is pending; the next page starts a new thread', async () => {
    const decode = compiled.offThreadPodPages();
    const big = page(Array.from({ length: 2000 }, (_, i) => `db-${i}`), '');
    const pending = assert.rejects(decode(big), /closed/);
    await decode.close();
    await pending;
    const again = await decode(page(['db-0'], ''));
    assert.equal(again.items.length, 1);
    await decode.close();
  });

  it('stops its thread once idle, and a later page starts it again', async () => {
    const clock = fakeClock();
    const decode = compiled.offThreadPodPages(50, clock);
    try {
      const pages = await Promise.all([0, 1, 2].map((i) => decode(page([`db-${i}`], ''))));
      assert.deepEqual(pages.map((p) => (p.items[0] as ReturnType<typeof slimPod>).name), ['db-0', 'db-1', 'db-2']);
      assert.equal(decode.running(), true);
      await clock.advance(49);
      assert.equal(decode.running(), true, 'not idle long enough yet');
      await clock.advance(1);
      assert.equal(decode.running(), false, 'stopped once idle for 50 ms');
      const again = await decode(page(['db-9'], ''));
      assert.equal(again.items.length, 1);
      assert.equal(decode.running(), true);
    } finally {
      await decode.close();
    }
  });
});
