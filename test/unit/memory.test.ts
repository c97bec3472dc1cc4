import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { LARGE_BODY_BYTES, releaseAfterLargeBody } from '../../src/common/memory.js';
import { NOT_AN_INTEGER, slimPod, slimWorkload } from '../../src/cluster/convert.js';
import { internTableBytes } from '../../src/cluster/rawFields.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

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

describe('pods and workloads with 256 KiB annotations, created and dropped (a tenant growing zonekeeper\'s memory)', () => {
  // A full collection where the runner did not expose one (node --test passes no --expose-gc).
  const collect = (): void => {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  };
  const big = (i: number) => `${String(i).padStart(6, '0')}${'x'.repeat(256 * 1024 - 6)}`;

  it('keeps nothing of them once dropped: the intern table stays within bytes, and retained heap stays flat', () => {
    collect();
    const tableBefore = internTableBytes();
    const heapBefore = process.memoryUsage().heapUsed;
    let kept: unknown[] = [];
    for (let i = 0; i < 200; i++) {
      const value = big(i);
      const pod = slimPod({
        metadata: { name: `p-${i}`, namespace: 'tenant', uid: `u-${i}`, annotations: {
          'controller.kubernetes.io/pod-deletion-cost': value, 'zonekeeper.io/instance-count': value, 'zonekeeper.io/subset-patch-not-applied': value,
        } },
        spec: {},
      });
      const workload = slimWorkload('StatefulSet', { metadata: { name: `w-${i}`, namespace: 'tenant', annotations: { 'zonekeeper.io/not-a-key': value } }, spec: { replicas: 1 } });
      // What is kept of each is bounded, whatever the annotation's size.
      assert.ok(JSON.stringify(pod).length < 4096, `pod ${i}: ${JSON.stringify(pod).length} characters kept`);
      assert.equal(pod.deletionCost, NOT_AN_INTEGER);
      assert.equal(workload.annotations['zonekeeper.io/not-a-key'], undefined, 'an unknown zonekeeper.io/* annotation is not kept');
      kept.push(pod, workload);
    }
    kept = [];
    assert.equal(kept.length, 0);
    collect();
    const retained = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(internTableBytes() - tableBefore < 64 * 1024, `the intern table grew ${internTableBytes() - tableBefore} bytes`);
    // 200 × 256 KiB is 50 MiB (100 MiB as UTF-16 in the table): flat means a few MiB of noise at most.
    assert.ok(retained < 8 * 1024 * 1024, `retained ${(retained / 1048576).toFixed(1)} MiB`);
  });
});
