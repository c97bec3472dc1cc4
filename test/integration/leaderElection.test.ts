// One writer when replicated (issue 9): the Lease elector and the conditional zone freeze,
// against a list/watch server on 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { leaseElector, type LeaderElector } from '../../src/actuator/leaderElection.js';
import type { ApiClient } from '../../src/cluster/apiClient.js';
import { slimWorkload } from '../../src/cluster/convert.js';
import { leaseNamespace } from '../../src/main.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { statefulSet } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { waitFor } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

/** An API client that can be made to fail every request: a replica that has crashed or lost its network. */
function severable(api: ApiClient): ApiClient & { cut: boolean } {
  const s = {
    cut: false,
    server: api.server,
    request: (...args: Parameters<ApiClient['request']>) => (s.cut ? Promise.reject(new Error('severed')) : api.request(...args)),
    requestBytes: (...args: Parameters<ApiClient['requestBytes']>) => (s.cut ? Promise.reject(new Error('severed')) : api.requestBytes(...args)),
    stream: (...args: Parameters<ApiClient['stream']>) => (s.cut ? Promise.reject(new Error('severed')) : api.stream(...args)),
  };
  return s;
}

const OPTS = { namespace: 'zonekeeper-system', name: 'zonekeeper-writers', leaseDurationSeconds: 1.5, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.2 };

describe('the writers\' Lease (its times on fake time)', () => {
  let api: FakeApiServer;
  before(async () => { api = await new FakeApiServer().start(); });
  after(() => api.stop());

  function replica(name: string, clock: ReturnType<typeof fakeClock>) {
    const client = severable(api.client());
    const events: { what: 'start' | 'stop'; at: number }[] = [];
    const elector = leaseElector(client, { ...OPTS, identity: name }, silent, {
      onStartedLeading: () => { events.push({ what: 'start', at: clock.now() }); },
      onStoppedLeading: () => { events.push({ what: 'stop', at: clock.now() }); },
    }, clock);
    return { client, elector, events };
  }
  const leader = (...rs: { elector: LeaderElector }[]) => rs.filter((r) => r.elector.isLeader());
  /** Once every running elector waits for its next try (its request answered), moves fake time by `ms`. */
  const step = async (clock: ReturnType<typeof fakeClock>, running: number, ms = 50) => {
    await waitFor(() => clock.pending() >= running, 'every elector waiting for its next try');
    await clock.advance(ms);
  };
  /** Steps fake time until `done` holds; returns how much of it passed. */
  const stepUntil = async (clock: ReturnType<typeof fakeClock>, running: number, done: () => boolean, limitMs: number) => {
    const from = clock.now();
    while (!done()) {
      assert.ok(clock.now() - from <= limitMs, `not within ${limitMs} ms of fake time`);
      await step(clock, running);
    }
    return clock.now() - from;
  };

  it('two replicas: exactly one leads; a graceful stop releases, and the other leads within a retry period', async () => {
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    const a = replica('a', clock);
    const b = replica('b', clock);
    a.elector.start();
    await waitFor(() => a.elector.isLeader(), 'a leads');
    b.elector.start();
    for (let t = 0; t < 1000; t += 50) await step(clock, 2);
    assert.deepEqual(leader(a, b).map((r) => r.elector.identity), ['a'], 'b waits while a renews');
    await a.elector.stop();
    assert.equal(api.leases.get('zonekeeper-system/zonekeeper-writers')!.spec.holderIdentity, '', 'released');
    const took = await stepUntil(clock, 1, () => b.elector.isLeader(), 800);
    assert.ok(took < 800, `b led ${took} ms after a released (lease duration 1.5 s)`);
    assert.equal(api.leases.get('zonekeeper-system/zonekeeper-writers')!.spec.leaseTransitions, 1);
    await b.elector.stop();
  });

  it('a leader that crashes: the other takes over within the lease duration, and only after the first stopped writing', async () => {
    api.leases.clear();
    const clock = fakeClock(Date.parse('2026-11-25T12:00:00Z'));
    const a = replica('crashing', clock);
    const b = replica('survivor', clock);
    a.elector.start();
    await waitFor(() => a.elector.isLeader(), 'a leads');
    b.elector.start();
    const severed = clock.now();
    a.client.cut = true;
    const took = await stepUntil(clock, 2, () => b.elector.isLeader(), 5000);
    assert.ok(took <= (OPTS.leaseDurationSeconds + 3 * OPTS.retryPeriodSeconds) * 1000, `took ${took} ms`);
    const aStopped = a.events.find((e) => e.what === 'stop')!;
    const bStarted = b.events.find((e) => e.what === 'start')!;
    assert.ok(aStopped, 'the cut-off leader stopped leading by itself (renew deadline)');
    assert.ok(aStopped.at < bStarted.at, `never two writers: a stopped at +${aStopped.at - severed} ms, b started at +${bStarted.at - severed} ms`);
    a.client.cut = false;
    for (let t = 0; t < 600; t += 50) await step(clock, 2);
    assert.deepEqual(leader(a, b).map((r) => r.elector.identity), ['survivor'], 'a comes back as a follower');
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });

  it('a Lease the API server refuses this identity (403) is said, not only retried; once granted, the refusal clears and it leads', async () => {
    const clock = fakeClock(Date.parse('2026-12-07T00:00:00Z'));
    api.faults.push({ match: (_m, p) => p.includes('/leases/denied'), status: 403, remaining: 3 });
    const elector = leaseElector(api.client(), { ...OPTS, name: 'denied', identity: 'x' }, silent, { onStartedLeading: () => {}, onStoppedLeading: () => {} }, clock);
    elector.start();
    await waitFor(() => elector.refused() !== '', 'the refusal seen');
    assert.match(elector.refused(), /^get the Lease zonekeeper-system\/denied: 403/);
    assert.equal(elector.isLeader(), false);
    while (!elector.isLeader()) await step(clock, 1, 300);
    assert.equal(elector.refused(), '', 'granted: nothing to say');
    await elector.stop();
  });

  it('the lease lives in the pod\'s namespace unless configured', () => {
    assert.equal(leaseNamespace('ops'), 'ops');
    assert.equal(leaseNamespace('', () => 'zonekeeper-system\n'), 'zonekeeper-system');
    assert.equal(leaseNamespace('', () => { throw new Error('not in a cluster'); }), 'default');
  });
});

describe('the zone-list freeze is conditional on the workload\'s resourceVersion', () => {
  it('two replicas freezing different lists at once: one list is written, and both adopt it', async () => {
    const api = await new FakeApiServer().start();
    api.put(statefulSet('db', 3));
    api.holdPatches();
    const sts = slimWorkload('StatefulSet', api.get('StatefulSet', 'default', 'db')!);
    const actuator = () => kubeActuator(api.client(), silent, createMetrics());
    const [one, two] = [actuator(), actuator()];
    one.freezeZones(sts, ['zone-a', 'zone-b', 'zone-c']);
    two.freezeZones(sts, ['zone-b', 'zone-c', 'zone-a']);
    await waitFor(() => api.patchesHeld() === 2, 'both freezes sent before either is answered');
    api.releasePatches();
    await Promise.all([one.settle(), two.settle()]);
    const frozen = api.get('StatefulSet', 'default', 'db')!.metadata.annotations['zonekeeper.io/zones'];
    assert.equal(api.patches.length, 1, 'one patch applied');
    assert.ok(api.conflicts >= 1, 'the other conflicted');
    assert.equal(one.pendingFreezes.get('default/StatefulSet/db')!.zones.join(','), frozen);
    assert.equal(two.pendingFreezes.get('default/StatefulSet/db')!.zones.join(','), frozen, 'the loser uses the winner\'s list');
    await api.stop();
  });
});
