import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LARGE_BODY_BYTES, releaseAfterLargeBody } from '../../src/common/memory.js';

describe('a full collection after large bodies', () => {
  it('small bodies never ask for one; a burst of large ones gets one, a second after the last', async () => {
    let collections = 0;
    // Each test file runs in its own process: this gc is the one the module finds first.
    (globalThis as { gc?: () => void }).gc = () => { collections++; };
    for (let i = 0; i < 100; i++) releaseAfterLargeBody(LARGE_BODY_BYTES - 1);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(collections, 0, 'no collection for small bodies');
    for (let i = 0; i < 5; i++) {
      releaseAfterLargeBody(LARGE_BODY_BYTES);
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(collections, 0, 'none while large bodies keep coming');
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(collections, 1, 'one when the burst is over');
  });
});
