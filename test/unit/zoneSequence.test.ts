import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { zoneSequence } from '../../src/placement/zoneSequence.js';

describe('zoneSequence', () => {
  it('deals ordinals 0..5 over 3 zones as a,b,c,a,b,c', () => {
    assert.deepEqual(zoneSequence(['a', 'b', 'c'], 6), ['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('is prefix-stable: the first n entries are the sequence for n', () => {
    const long = zoneSequence(['a', 'b', 'c', 'd'], 40);
    for (let n = 0; n <= 40; n++) assert.deepEqual(zoneSequence(['a', 'b', 'c', 'd'], n), long.slice(0, n));
  });

  it('keeps min(n, zones) zones after every scale-down to n (highest ordinals removed first)', () => {
    for (const zones of [['a', 'b', 'c'], ['a', 'b'], ['a', 'b', 'c', 'd', 'e']]) {
      const seq = zoneSequence(zones, 30);
      for (let n = 1; n <= 30; n++) {
        const kept = new Set(seq.slice(0, n));
        assert.equal(kept.size, Math.min(n, zones.length), `n=${n} zones=${zones.join(',')}`);
        const counts = zones.map((z) => seq.slice(0, n).filter((x) => x === z).length);
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `balanced at n=${n}`);
      }
    }
  });

  it('honours weights, minimums and maximums', () => {
    const prefs = (z: string) => ({ a: { minReplicas: 0, maxReplicas: undefined, weight: 2 }, b: { minReplicas: 2, maxReplicas: 3, weight: 1 }, c: { minReplicas: 0, maxReplicas: undefined, weight: 0 } }[z]!);
    const seq = zoneSequence(['a', 'b', 'c'], 8, prefs);
    assert.deepEqual(seq.slice(0, 2), ['b', 'b'], 'minimums first');
    assert.equal(seq.filter((z) => z === 'b').length, 3, 'b capped at 3');
    assert.ok(!seq.includes('c'), 'weight 0 takes only its minimum (0)');
  });

  it('ends early when every zone is at its maximum', () => {
    const capped = () => ({ minReplicas: 0, maxReplicas: 1, weight: 1 });
    assert.deepEqual(zoneSequence(['a', 'b'], 5, capped), ['a', 'b']);
  });
});
