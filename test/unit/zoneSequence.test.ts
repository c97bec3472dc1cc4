import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePreferences } from '../../src/cluster/zonePreferences.js';
import { sequencePreferences } from '../../src/placement/preferences.js';
import { seatZones, zoneSequence } from '../../src/placement/zoneSequence.js';

describe('zoneSequence', () => {
  it('deals ordinals 0..5 over 3 zones as a,b,c,a,b,c', () => {
    assert.deepEqual(zoneSequence(['a', 'b', 'c'], 6), ['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('is prefix-stable: the first n entries are the sequence for n', () => {
    const long = zoneSequence(['a', 'b', 'c', 'd'], 40);
    for (let n = 0; n <= 40; n++) assert.deepEqual(zoneSequence(['a', 'b', 'c', 'd'], n), long.slice(0, n));
  });

  it('seatZones answers every seat as the sequence does, in any order of asking (it reuses one computed sequence)', () => {
    const prefs = (z: string) => ({ a: { minReplicas: 0, maxReplicas: undefined, weight: 3 }, b: { minReplicas: 1, maxReplicas: 4, weight: 1 },
      c: { minReplicas: 0, maxReplicas: 2, weight: 1 } }[z]!);
    const seq = zoneSequence(['a', 'b', 'c'], 30, prefs);
    for (const order of [[29, 3, 17, 0, 28, 5], [0, 1, 2, 10, 9, 29]]) {
      const of = seatZones(['a', 'b', 'c'], prefs);
      for (const i of order) assert.equal(of(i).zone, seq[i], `seat ${i}`);
    }
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
    const prefs = (z: string) => ({ a: { minReplicas: 0, maxReplicas: undefined, weight: 2 }, b: { minReplicas: 2, maxReplicas: 3, weight: 1 },
      c: { minReplicas: 0, maxReplicas: undefined, weight: 0 } }[z]!);
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

describe('zoneSequence with zone preferences', () => {
  const seq = (json: object, n: number, zones = ['a', 'b', 'c']) => {
    const p = parsePreferences(JSON.stringify(json));
    assert.ok(p.ok);
    return zoneSequence(zones, n, sequencePreferences(p.ok ? p.spec : undefined));
  };

  it('equal weights give a,b,c,a,b,c', () => {
    assert.deepEqual(seq({ zones: { '*': { weight: 1 } } }, 6), ['a', 'b', 'c', 'a', 'b', 'c']);
    assert.deepEqual(seq({ zones: { '*': { weight: 5 } } }, 6), ['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('weights 2:1:1 keep every prefix within one replica of proportional', () => {
    const s = seq({ zones: { a: { weight: 2 }, b: { weight: 1 }, c: { weight: 1 } } }, 200);
    for (let n = 1; n <= 200; n++) {
      const prefix = s.slice(0, n);
      for (const [z, w] of [['a', 2], ['b', 1], ['c', 1]] as const) {
        const have = prefix.filter((x) => x === z).length;
        assert.ok(Math.abs(have - (n * w) / 4) <= 1, `n=${n} zone ${z}: ${have} vs ${(n * w) / 4}`);
      }
    }
  });

  it('respects max caps and gives weight-0 zones only their minReplicas', () => {
    const s = seq({ zones: { a: { weight: 1, maxReplicas: 2 }, b: { weight: 1 }, c: { weight: 0, minReplicas: 1 } } }, 10);
    assert.equal(s.filter((z) => z === 'a').length, 2);
    assert.equal(s.filter((z) => z === 'c').length, 1);
    assert.equal(s[0], 'c', 'minimums first');
    assert.equal(s.filter((z) => z === 'b').length, 7);
  });

  it("for every n, scaling down from n+1 to n changes one zone's count by one", () => {
    const s = seq({ zones: { a: { weight: 3 }, b: { weight: 2, minReplicas: 1 }, c: { weight: 1, maxReplicas: 4 } } }, 60);
    const counts = (n: number) => ['a', 'b', 'c'].map((z) => s.slice(0, n).filter((x) => x === z).length);
    for (let n = 0; n < 60; n++) {
      const diff = counts(n + 1).map((c, i) => c - counts(n)[i]!);
      assert.deepEqual(diff.filter((d) => d !== 0), [1]);
    }
  });

  it('a zone without an entry and no "*" gets nothing', () => {
    assert.deepEqual(seq({ zones: { a: { weight: 1 } } }, 3), ['a', 'a', 'a']);
  });
});
