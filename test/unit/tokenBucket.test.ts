import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenBucket } from '../../src/common/tokenBucket.js';

describe('token bucket', () => {
  it('take: a burst, then one per 1/rate seconds', () => {
    let t = 0;
    const b = tokenBucket(2, 3, () => t);
    assert.deepEqual([b.take(), b.take(), b.take(), b.take()], [true, true, true, false]);
    t = 400;
    assert.equal(b.take(), false, '0.8 of a token');
    t = 500;
    assert.deepEqual([b.take(), b.take()], [true, false]);
    t = 100_000;
    assert.deepEqual([b.take(), b.take(), b.take(), b.take()], [true, true, true, false], 'never more than the burst saved');
  });

  it('wait: nothing within the burst, then how long until the token taken is due', () => {
    let t = 0;
    const b = tokenBucket(100, 2, () => t);
    assert.deepEqual([b.wait(), b.wait()], [0, 0]);
    assert.equal(b.wait(), 10);
    assert.equal(b.wait(), 20, 'tokens taken in advance queue up');
    t = 30; // 3 tokens more: the 2 owed, and 1 now
    assert.deepEqual([b.wait(), b.wait()], [0, 10]);
  });

  it('giveBack: a turn taken and not used goes back, and the next turn comes sooner; never past the burst', () => {
    let t = 0;
    const b = tokenBucket(4, 1, () => t);
    assert.deepEqual([b.wait(), b.wait(), b.wait()], [0, 250, 500]);
    b.giveBack();
    assert.equal(b.wait(), 500, 'the turn given back is the next one taken');
    t = 10_000;
    b.giveBack();
    assert.deepEqual([b.take(), b.take()], [true, false], 'the burst is 1');
  });
});
