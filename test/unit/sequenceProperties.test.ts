// Properties of the zone sequence, the one layout rule behind ordinals, instance IDs, zone
// balance, the pod picker and deletion costs, over thousands of seeded random cases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION } from '../../src/cluster/annotations.js';
import { sequencePreferences } from '../../src/placement/preferences.js';
import { cappedBy, seatZone, sequenceCounts, zoneSequence, type ZonePreference } from '../../src/placement/zoneSequence.js';
import { deployment, node, rsPod, storeOf } from '../support/builders.js';
import { defaultSettings, pickPods } from '../support/placement.js';

const SEED = Number(process.env.ZK_PROPERTY_SEED ?? 7);
const CASES = 3000;

function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

interface Case { zones: string[]; spec: Record<string, { weight: number; minReplicas?: number; maxReplicas?: number }>; capacity: Record<string, number>; kind: 'equal' | 'weights' | 'bounded' }

function randomCase(r: (n: number) => number): Case {
  const zones = Array.from({ length: 1 + r(6) }, (_, i) => `z${i}`);
  const kind = (['equal', 'weights', 'bounded'] as const)[r(3)]!;
  const spec: Case['spec'] = {};
  const capacity: Record<string, number> = {};
  for (const z of zones) {
    if (kind === 'equal') spec[z] = { weight: 1 };
    else if (kind === 'weights') spec[z] = { weight: r(6) };
    else {
      spec[z] = { weight: r(6), ...(r(3) === 0 ? { minReplicas: r(4) } : {}), ...(r(3) === 0 ? { maxReplicas: r(8) } : {}) };
      if (r(4) === 0) capacity[z] = r(10);
    }
  }
  if (kind === 'weights' && zones.every((z) => spec[z]!.weight === 0)) spec[zones[0]!]!.weight = 1;
  return { zones, spec, capacity, kind };
}

const describeCase = (c: Case) => JSON.stringify(c);
const tally = (zones: string[], seats: string[]) => Object.fromEntries(zones.map((z) => [z, seats.filter((s) => s === z).length]));

describe(`zone sequence properties (seed ${SEED}, ${CASES} cases, zones 1–6, replicas 0–60)`, () => {
  it('prefix-stable; within min, max and capacity; equal weights keep skew ≤ 1 and cover min(n, zones); counts and seats agree', () => {
    const r = prng(SEED);
    for (let c = 0; c < CASES; c++) {
      const k = randomCase(r);
      const prefs = cappedBy(sequencePreferences({ rebalance: false, zones: Object.fromEntries(Object.entries(k.spec).map(([z, p]) => [z,
        { minReplicas: p.minReplicas ?? 0, maxReplicas: p.maxReplicas, weight: p.weight }])) }), k.capacity);
      const seq = zoneSequence(k.zones, 60, prefs);
      const limit = (p: ZonePreference) => p.maxReplicas ?? Infinity;
      const mins = k.zones.map((z) => Math.min(prefs(z).minReplicas, limit(prefs(z))));
      const minSum = mins.reduce((a, b) => a + b, 0);
      const n = r(61);
      assert.deepEqual(zoneSequence(k.zones, n, prefs), seq.slice(0, n), `prefix ${n}: ${describeCase(k)}`);
      for (let m = 0; m <= seq.length; m++) {
        const counts = tally(k.zones, seq.slice(0, m));
        k.zones.forEach((z, i) => {
          assert.ok(counts[z]! <= limit(prefs(z)), `max/capacity at ${m}: ${describeCase(k)}`);
          if (m >= minSum) assert.ok(counts[z]! >= mins[i]!, `min at ${m}: ${describeCase(k)}`);
        });
        if (k.kind === 'equal') {
          const values = Object.values(counts);
          assert.ok(Math.max(...values) - Math.min(...values) <= 1, `skew at ${m}: ${describeCase(k)}`);
          assert.equal(values.filter((v) => v > 0).length, Math.min(m, k.zones.length), `coverage at ${m}`);
        }
        if (m === n || m === seq.length) assert.deepEqual(sequenceCounts(k.zones, m, prefs), counts, `counts at ${m}: ${describeCase(k)}`);
      }
      if (seq.length > 0) {
        const i = r(seq.length);
        assert.equal(seatZone(k.zones, i, prefs).zone, seq[i], `seat ${i}: ${describeCase(k)}`);
      }
    }
  });

  // Quota (every prefix within one replica of proportional) is not met by the sequence as
  // docs/design.md#zone-list-zone-sequence-fleet-balance defines it (Sainte-Laguë, equal priorities to the earlier zone): weights 5,1,1,1
  // give the first zone 3 of the first 3 seats (share 1.88). Meeting it needs a quota-respecting
  // rule (Balinski–Young), which would move the seats of existing weighted workloads: a decision
  // for the people who plan (closing note of issue 10). What the rule does bound, over every
  // weight vector the annotation's small weights make (0–5, up to 6 zones, 60 seats): 1.5.
  it('weights alone: every prefix within 1.5 replicas of proportional, for every weight vector 0–5 over 1–6 zones', () => {
    for (let n = 1; n <= 6; n++) {
      const zones = Array.from({ length: n }, (_, i) => `z${i}`);
      for (let code = 0; code < 6 ** n; code++) {
        const weights = zones.map((_, i) => Math.floor(code / 6 ** i) % 6);
        const total = weights.reduce((t, w) => t + w, 0);
        if (total === 0) continue;
        const prefs = sequencePreferences({ rebalance: false, zones: Object.fromEntries(zones.map((z, i) => [z, { minReplicas: 0, weight: weights[i]! }])) });
        const seq = zoneSequence(zones, 60, prefs);
        assert.equal(seq.length, 60, `weights ${weights}`);
        const counts = zones.map(() => 0);
        for (let m = 1; m <= seq.length; m++) {
          counts[zones.indexOf(seq[m - 1]!)]!++;
          for (let i = 0; i < n; i++) {
            const share = (m * weights[i]!) / total;
            assert.ok(Math.abs(counts[i]! - share) <= 1.5, `weights ${weights}: z${i} holds ${counts[i]} of ${m}, proportional is ${share.toFixed(2)}`);
          }
        }
      }
    }
  });

  it('random walks of scale up and down: the picker always removes from the end of the sequence', () => {
    const r = prng(SEED + 1);
    for (let w = 0; w < 200; w++) {
      const k = randomCase(r);
      if (Object.keys(k.capacity).length > 0) k.capacity = {};
      const annotation = JSON.stringify({ zones: k.spec });
      const prefs = sequencePreferences({ rebalance: false, zones: Object.fromEntries(Object.entries(k.spec).map(([z, p]) => [z,
        { minReplicas: p.minReplicas ?? 0, maxReplicas: p.maxReplicas, weight: p.weight }])) });
      const seq = zoneSequence(k.zones, 40, prefs);
      let size = 0;
      for (let step = 0; step < 6 && seq.length > 0; step++) {
        const target = r(seq.length + 1);
        if (target > size) { size = target; continue; }
        const remove = size - target;
        if (remove === 0) continue;
        // The layout at `size`: instance ID i in zone seq[i], as placement put it.
        const pods = seq.slice(0, size).map((z, i) => rsPod('web', `id${i}`, { nodeName: `node-${z}`, annotations: { [ANNOTATION.instanceId]: String(i) } }));
        const store = storeOf([...k.zones.map((z) => node(`node-${z}`, z)), ...deployment('web', size, { [ANNOTATION.instanceIds]: 'true', [ANNOTATION.zonePreferences]: annotation, [ANNOTATION.zones]: k.zones.join(',') }), ...pods]);
        const answer = pickPods('default', remove, pods.map((p) => p.metadata.name), store, defaultSettings());
        const expected = Array.from({ length: remove }, (_, j) => `web-rs-id${size - 1 - j}`).sort();
        assert.deepEqual([...answer.chosen_pods, ...answer.tied_pods].sort(), expected, `walk ${w} step ${step}: ${size} → ${target}: ${describeCase(k)}`);
        size = target;
      }
    }
  });
});
