// The robustness run's federation profile (test/chaos/federationRun.ts) on the newest Kubernetes: a fixed seed, or
// ZK_CHAOS_SEED (a number, or "random"); ZK_CHAOS_SECONDS sets the walk's length. `npm run test:chaos -- --profile federation` runs a long one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeVersions } from './controlPlane.js';
import { federationRun } from '../chaos/federationRun.js';

const SECONDS = Number(process.env.ZK_CHAOS_SECONDS ?? 60);
const newest = kubeVersions().filter((k) => k.minor >= 31).at(-1);
const chosen = process.env.ZK_CHAOS_SEED;
const seed = chosen === 'random' ? Math.floor(Math.random() * 2 ** 31) : chosen ? Number(chosen) : 20261207;

(newest ? describe : describe.skip)(`[${newest?.version ?? 'none ≥ 1.31'}] a robustness run across clusters`, () => {
  it(`seed ${seed}, ${SECONDS}s: members lost and back, the karmada-apiserver restarted, the holder killed, policies edited; no promise broken`, { timeout: (SECONDS + 600) * 1000 }, async () => {
    const f = await federationRun(newest!.bin, seed, SECONDS);
    assert.ok(f.operations.length > 0 && f.checks > 0, 'the walk did something');
    assert.deepEqual(f.violations, [], `seed ${seed}: ${f.operations.join('; ')}`);
    assert.ok(f.calmAfter !== undefined, `seed ${seed}: every binding settled after the heal`);
  });
});
