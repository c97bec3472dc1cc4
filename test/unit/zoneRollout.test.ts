// The zone-by-zone rollout planner (src/placement/zoneRollout.ts), pure: batch sizes, settings,
// the order on a rollback, and what a step waits for, from pods and seats in a store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimWorkload } from '../../src/cluster/convert.js';
import { fakeClock } from '../../src/common/clock.js';
import { workloadModel } from '../../src/placement/model.js';
import { batchSize, pauseRecord, rolloutSettingsOf, rolloutStep, type RolloutSettings } from '../../src/placement/rolloutPlan.js';
import { statefulSet } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';
import { rolloutCluster } from '../support/rolloutCluster.js';

const DEFAULTS = { maxUnavailable: 'zone', batchGrowth: 2, progressDeadlineSeconds: 600 };
const WHOLE_ZONES: RolloutSettings = { maxUnavailable: { kind: 'zone' }, batchGrowth: 0, progressDeadlineSeconds: 600, downAlwaysGo: false };

function planned(setUp: (c: ReturnType<typeof rolloutCluster>, now: number) => void, settings = WHOLE_ZONES) {
  const clock = fakeClock(Date.parse('2026-11-27T12:00:00Z'));
  const c = rolloutCluster(clock, { replicas: 9 });
  c.stop();
  setUp(c, clock.now());
  const w = c.store.workload('StatefulSet', 'default', 'db')!;
  const model = workloadModel({ kind: 'StatefulSet', namespace: 'default', name: 'db' }, w, c.store, defaultSettings());
  assert.notEqual(model.policy, 'none');
  return rolloutStep(model as Exclude<typeof model, { policy: 'wait' }>, w, c.store, settings, clock.now() + 1_000);
}

describe('zone-by-zone rollout planner', () => {
  it('batches grow 1, 2, 4 … up to the zone\'s maximum; a factor of 0 gives fixed batches, 1 single pods', () => {
    const sizes = (growth: number, max: number, total: number) => {
      const out: number[] = [];
      for (let done = 0; done < total;) {
        const { size } = batchSize(growth, done, max);
        out.push(Math.min(size, total - done));
        done += size;
      }
      return out;
    };
    assert.deepEqual(sizes(2, 10, 10), [1, 2, 4, 3]);
    assert.deepEqual(sizes(2, 3, 10), [1, 2, 3, 3, 1]);
    assert.deepEqual(sizes(3, 100, 20), [1, 3, 9, 7]);
    assert.deepEqual(sizes(0, 4, 10), [4, 4, 2]);
    assert.deepEqual(sizes(1, 4, 3), [1, 1, 1]);
    assert.deepEqual([0, 1, 3, 6].map((u) => batchSize(2, u, 3).step), [1, 2, 3, 4]);
  });

  it('settings: the annotations, else the zone disruption budget, else the defaults; a bad value is named', () => {
    const w = (annotations: Record<string, string>) => slimWorkload('StatefulSet', statefulSet('db', 3, { annotations }));
    assert.deepEqual(rolloutSettingsOf(w({}), DEFAULTS), { maxUnavailable: { kind: 'zone' }, batchGrowth: 2, progressDeadlineSeconds: 600, downAlwaysGo: false });
    assert.deepEqual((rolloutSettingsOf(w({ 'zonekeeper.io/zone-disruption-budget': '2' }), DEFAULTS) as RolloutSettings).maxUnavailable, { kind: 'count', n: 2 });
    assert.deepEqual(rolloutSettingsOf(w({ 'zonekeeper.io/zone-disruption-budget': '2', 'zonekeeper.io/zone-rollout-max-unavailable': '50%' }), DEFAULTS),
      { maxUnavailable: { kind: 'percent', p: 50 }, batchGrowth: 2, progressDeadlineSeconds: 600, downAlwaysGo: false });
    assert.equal((rolloutSettingsOf(w({ 'zonekeeper.io/unhealthy-pod-eviction-policy': 'AlwaysAllow' }), DEFAULTS) as RolloutSettings).downAlwaysGo, true);
    assert.deepEqual(rolloutSettingsOf(w({ 'zonekeeper.io/unhealthy-pod-eviction-policy': 'Always' }), DEFAULTS),
      { error: 'zonekeeper.io/unhealthy-pod-eviction-policy: "Always" is not IfHealthyBudget or AlwaysAllow' });
    assert.deepEqual(rolloutSettingsOf(w({ 'zonekeeper.io/zone-rollout-max-unavailable': 'all' }), DEFAULTS),
      { error: 'zonekeeper.io/zone-rollout-max-unavailable: "all" is not "zone", a count (1, 2, …) or a percentage (1%–100%)' });
    assert.deepEqual(rolloutSettingsOf(w({ 'zonekeeper.io/zone-rollout-batch-growth': '1.5' }), DEFAULTS),
      { error: 'zonekeeper.io/zone-rollout-batch-growth: "1.5" is not a whole number from 0 to 10' });
    assert.deepEqual(rolloutSettingsOf(w({ 'zonekeeper.io/zone-rollout-progress-deadline-seconds': '0' }), DEFAULTS),
      { error: 'zonekeeper.io/zone-rollout-progress-deadline-seconds: "0" is not a whole number from 1 to 86400' });
  });

  it('a newer revision during a rollout: the pods the interrupted rollout made go first, the newest first, then the rest zone by zone', () => {
    // db-r2 reached all of zone-a (db-6, db-3, db-0, in that order) and db-7 of zone-b; then db-r3.
    const steps: string[][] = [];
    const setUp = (made: string[]) => (c: ReturnType<typeof rolloutCluster>, now: number) => {
      for (const p of c.pods.values()) p.metadata.creationTimestamp = new Date(now - 3_600_000).toISOString();
      ['db-6', 'db-3', 'db-0', 'db-7'].forEach((name, i) => {
        const p = c.pods.get(name)!;
        p.metadata.labels['controller-revision-hash'] = 'db-r2';
        p.metadata.creationTimestamp = new Date(now - 60_000 + i * 10_000).toISOString();
        c.put(p);
      });
      for (const name of made) c.pods.get(name)!.metadata.labels['controller-revision-hash'] = 'db-r3';
      for (const p of c.pods.values()) c.put(p);
      c.update('db-r3');
    };
    let made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = planned(setUp(made));
      assert.equal(s.kind, 'evict', s.why);
      if (s.kind !== 'evict') return;
      steps.push([s.view.zone!, ...s.pods.map((p) => p.name)]);
      made = [...made, ...s.pods.map((p) => p.name)];
    }
    assert.deepEqual(steps, [['zone-b', 'db-7', 'db-4', 'db-1'], ['zone-a', 'db-0', 'db-3', 'db-6'], ['zone-c', 'db-8', 'db-5', 'db-2']]);
  });

  it('waits while a seat in another zone is down, and says which', () => {
    const s = planned((c) => {
      const p = c.pods.get('db-4')!;
      p.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }];
      c.put(p);
      c.update('db-r2');
    });
    assert.equal(s.kind, 'wait');
    if (s.kind !== 'wait') return;
    assert.equal(s.view.zone, 'zone-a');
    assert.equal(s.why, 'zone-a is next; it waits until every seat outside it is available');
    assert.deepEqual(s.view.waitsFor, ['pod db-4 is not Ready (zone-b)']);
  });

  it('another zone down: under AlwaysAllow the next zone\'s old pods already down are replaced meanwhile (a rollback during an outage), and only they', () => {
    const down = (c: ReturnType<typeof rolloutCluster>, name: string) => {
      const p = c.pods.get(name)!;
      p.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }];
      c.put(p);
    };
    const setUp = (c: ReturnType<typeof rolloutCluster>) => {
      down(c, 'db-4');
      down(c, 'db-3');
      c.update('db-r2');
    };
    const waits = planned(setUp);
    assert.equal(waits.kind, 'wait', 'by default a pod already down waits for the other zone too');
    const s = planned(setUp, { ...WHOLE_ZONES, downAlwaysGo: true });
    assert.equal(s.kind, 'evict');
    if (s.kind !== 'evict') return;
    assert.deepEqual(s.pods.map((p) => p.name), ['db-3']);
    assert.match(s.why, /^zone-a: its 1 old pod already down \(zonekeeper\.io\/unhealthy-pod-eviction-policy AlwaysAllow; .*, while pod db-4 is not Ready \(zone-b\)$/);
    // Nothing down in the next zone: it waits, AlwaysAllow or not; nor is a pod already terminating evicted again.
    assert.equal(planned((c) => { down(c, 'db-4'); c.update('db-r2'); }, { ...WHOLE_ZONES, downAlwaysGo: true }).kind, 'wait');
    const terminating = planned((c) => {
      setUp(c);
      c.pods.get('db-3')!.metadata.deletionTimestamp = new Date().toISOString();
      c.put(c.pods.get('db-3')!);
    }, { ...WHOLE_ZONES, downAlwaysGo: true });
    assert.equal(terminating.kind, 'wait', terminating.kind === 'evict' ? terminating.pods.map((p) => p.name).join() : '');
  });

  it('a rollback during a long outage: a pod it cannot replace, down past the progress deadline, pauses it naming that pod (not the revision); under AlwaysAllow the bad pods go', () => {
    // db-r2 reached zone-a (db-0, db-3, db-6) 30 min ago and never started; db-1 (zone-b, db-r1, an hour older) is down for 2 h; rolled back to db-r1.
    const setUp = (c: ReturnType<typeof rolloutCluster>, now: number) => {
      const at = (ms: number) => new Date(now - ms).toISOString();
      for (const p of c.pods.values()) p.metadata.creationTimestamp = at(3 * 3_600_000);
      for (const name of ['db-0', 'db-3', 'db-6']) {
        const p = c.pods.get(name)!;
        p.metadata.labels['controller-revision-hash'] = 'db-r2';
        p.metadata.creationTimestamp = at(1_800_000);
        p.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: at(1_800_000) }];
      }
      c.pods.get('db-1')!.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: at(2 * 3_600_000) }];
      for (const p of c.pods.values()) c.put(p);
      c.update('db-r1');
    };
    const paused = planned(setUp);
    assert.equal(paused.kind, 'pause', paused.why);
    assert.equal(paused.why, 'zone-a is next; it waits on a seat down 7201s, past the progress deadline (600s), that this rollout does not replace: pod db-1 is not Ready (zone-b)');
    if (paused.kind === 'pause') assert.deepEqual([paused.pod, paused.waitsOn], ['db-1', 'db-1']);
    // Its record names db-1: db-1 Ready again ends it, and zone-a goes on; down still, it holds.
    const record = { 'zonekeeper.io/zone-rollout-paused': pauseRecord('db-r1', 0, paused.why, 'db-1') };
    const held = planned((c, now) => { setUp(c, now); c.annotate('zonekeeper.io/zone-rollout-paused', record['zonekeeper.io/zone-rollout-paused']); });
    assert.equal(held.kind, 'paused', held.why);
    const back = planned((c, now) => {
      setUp(c, now);
      c.pods.get('db-1')!.status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(now).toISOString() }];
      c.put(c.pods.get('db-1')!);
      c.annotate('zonekeeper.io/zone-rollout-paused', record['zonekeeper.io/zone-rollout-paused']);
    });
    assert.equal(back.kind, 'evict', back.why);
    if (back.kind === 'evict') assert.equal(back.clearPause, 'pod-available');
    // A pause on the revision's own pod (no pod named) never ends by itself.
    const own = planned((c, now) => {
      setUp(c, now);
      c.pods.get('db-1')!.status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(now).toISOString() }];
      c.put(c.pods.get('db-1')!);
      c.annotate('zonekeeper.io/zone-rollout-paused', pauseRecord('db-r1', 0, 'pod db-0 not available'));
    });
    assert.equal(own.kind, 'paused', own.why);
    // Down for less than the deadline: waited for.
    const waits = planned(setUp, { ...WHOLE_ZONES, progressDeadlineSeconds: 3 * 3600 });
    assert.equal(waits.kind, 'wait', waits.why);
    if (waits.kind === 'wait') assert.deepEqual(waits.view.waitsFor, ['pod db-1 is not Ready (zone-b)']);
    const s = planned(setUp, { ...WHOLE_ZONES, downAlwaysGo: true });
    assert.equal(s.kind, 'evict', s.why);
    if (s.kind === 'evict') assert.deepEqual(s.pods.map((p) => p.name).sort(), ['db-0', 'db-3', 'db-6']);
  });

  it('an old pod already down in the zone goes first and counts in the batch', () => {
    const s = planned((c) => {
      const p = c.pods.get('db-0')!;
      p.status.conditions = [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }];
      c.put(p);
      c.update('db-r2');
    }, { ...WHOLE_ZONES, maxUnavailable: { kind: 'count', n: 2 } });
    assert.equal(s.kind, 'evict');
    if (s.kind === 'evict') assert.deepEqual(s.pods.map((p) => p.name), ['db-0', 'db-6']);
  });

  it('waits for the StatefulSet controller to report the revision of a new spec', () => {
    const s = planned((c) => {
      c.update('db-r2');
      c.sts.status.observedGeneration = 1;
      c.put(c.sts);
    });
    assert.equal(s.kind, 'wait');
    assert.match(s.why, /has not reported the revision of the spec yet/);
  });

  it('not OnDelete: nothing to do', () => {
    const s = planned((c) => {
      c.sts.spec.updateStrategy = { type: 'RollingUpdate' };
      c.update('db-r2');
    });
    assert.equal(s.kind, 'none');
    assert.match(s.why, /not OnDelete/);
  });
});
