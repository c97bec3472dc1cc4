import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { LARGE_BODY_BYTES, releaseAfterLargeBody } from '../../src/common/memory.js';

describe('a full collection after large bodies (fake time)', () => {
  it('small bodies never ask for one; a burst of large ones gets one, a second after the last', async () => {
    const clock = fakeClock();
    let collections = 0;
    // Each test file runs in its own process: this gc is the one the module finds first.
    (globalThis as { gc?: () => void }).gc = () => { collections++; };
    for (let i = 0; i < 100; i++) releaseAfterLargeBody(LARGE_BODY_BYTES - 1, clock);
    await clock.advance(1200);
    assert.equal(collections, 0, 'no collection for small bodies');
    for (let i = 0; i < 5; i++) {
      releaseAfterLargeBody(LARGE_BODY_BYTES, clock);
      await clock.advance(300);
    }
    assert.equal(collections, 0, 'none while large bodies keep coming');
    await clock.advance(699);
    assert.equal(collections, 0, 'not before a quiet second');
    await clock.advance(1);
    assert.equal(collections, 1, 'one when the burst is over');
  });
});
