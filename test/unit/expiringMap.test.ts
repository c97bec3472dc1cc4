import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ExpiringMap } from '../../src/common/expiringMap.js';
import { FakeClock } from '../support/placement.js';

describe('ExpiringMap', () => {
  it('says which entries leave and why: deleted, replaced, expired, evicted as the oldest', () => {
    const clock = new FakeClock();
    const dropped: string[] = [];
    const m = new ExpiringMap<string, number>({ ttlMs: 1000, max: 2, clock, onDrop: (k, v) => dropped.push(`${k}=${v}`) });
    m.set('a', 1);
    m.set('a', 2);
    assert.deepEqual(dropped, ['a=1'], 'replaced');
    m.set('b', 3);
    m.set('c', 4);
    assert.deepEqual(dropped, ['a=1', 'a=2'], 'a, the oldest, evicted past max');
    assert.equal(m.delete('b'), true);
    assert.equal(m.delete('b'), false);
    clock.advance(1000);
    assert.equal(m.get('c'), undefined);
    assert.deepEqual(dropped, ['a=1', 'a=2', 'b=3', 'c=4']);
    assert.equal(m.size, 0);
  });

  it('empties and fills again without losing count', () => {
    const m = new ExpiringMap<string, number>({ ttlMs: 60_000, max: 100_000 });
    for (let i = 0; i < 1000; i++) {
      m.set(`k${i}`, i);
      assert.equal(m.get(`k${i}`), i);
      m.delete(`k${i}`);
    }
    assert.equal(m.size, 0);
  });
});
