import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventRecorder } from '../../src/actuator/events.js';
import { slimWorkload } from '../../src/cluster/convert.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { statefulSet } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { FakeClock } from '../support/placement.js';
import { turns, waitFor } from '../support/wait.js';

describe('Kubernetes Events on workloads, as client-go records them', () => {
  let api: FakeApiServer;
  before(async () => { api = await new FakeApiServer().start(); });
  after(() => api.stop());
  const recorder = (clock: FakeClock) => eventRecorder(api.client(), silent, createMetrics(), { burst: 25, refillMs: 300_000, aggregateMs: 600_000, clock });

  it('an identical event is counted on the existing one; it names the workload as its object', async () => {
    const clock = new FakeClock();
    const r = recorder(clock);
    const db = slimWorkload('StatefulSet', statefulSet('db', 3));
    for (let i = 0; i < 3; i++) {
      r.record(db, 'Warning', 'VolumeOverridesPin', 'pod db-0: volume wins over the pin to zone-a');
      await r.settle();
      clock.advance(1000);
    }
    const mine = [...api.kubeEvents.values()].filter((e) => e.involvedObject.name === 'db');
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.count, 3);
    assert.deepEqual(mine[0]!.involvedObject, { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'default', name: 'db', uid: 'sts-db' });
    assert.equal(mine[0]!.type, 'Warning');
    assert.notEqual(mine[0]!.firstTimestamp, mine[0]!.lastTimestamp);
  });

  it('Events made at one instant have names of their own: 300 of them, 300 Events', async () => {
    const r = eventRecorder(api.client(), silent, createMetrics(), { burst: 1000, refillMs: 300_000, aggregateMs: 600_000, clock: new FakeClock() });
    const burst = slimWorkload('StatefulSet', statefulSet('burst', 3));
    for (let i = 0; i < 300; i++) r.record(burst, 'Warning', 'SubsetUnschedulable', `message ${i}`);
    await r.settle();
    assert.equal([...api.kubeEvents.values()].filter((e) => e.involvedObject.name === 'burst').length, 300);
  });

  it('at most 25 at once per workload, then one per 5 minutes; other workloads are not held back', async () => {
    const clock = new FakeClock();
    const r = recorder(clock);
    const storm = slimWorkload('StatefulSet', statefulSet('storm', 3));
    const calm = slimWorkload('StatefulSet', statefulSet('calm', 3));
    for (let i = 0; i < 40; i++) r.record(storm, 'Warning', 'SubsetUnschedulable', `message ${i}`);
    r.record(calm, 'Normal', 'ZoneListFrozen', 'frozen');
    await r.settle();
    const count = (name: string) => [...api.kubeEvents.values()].filter((e) => e.involvedObject.name === name).length;
    assert.equal(count('storm'), 25);
    assert.equal(count('calm'), 1);
    clock.advance(300_000);
    for (let i = 40; i < 45; i++) r.record(storm, 'Warning', 'SubsetUnschedulable', `message ${i}`);
    await r.settle();
    assert.equal(count('storm'), 26);
  });

  it('messages alike in what an Event holds (1 KiB) are one Event: what is kept to aggregate them is no longer than that', async () => {
    const r = recorder(new FakeClock());
    const long = slimWorkload('StatefulSet', statefulSet('long', 3));
    const head = 'x'.repeat(1024);
    for (const tail of ['a', 'b'.repeat(256 * 1024)]) {
      r.record(long, 'Warning', 'InvalidZonePreferences', `${head}${tail}`);
      await r.settle();
    }
    const mine = [...api.kubeEvents.values()].filter((e) => e.involvedObject.name === 'long');
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.count, 2);
    assert.equal(mine[0]!.message, head);
  });
  it('a few written at once, a bounded number waiting behind them, the rest dropped and counted', async () => {
    const metrics = createMetrics();
    const options = { burst: 25, refillMs: 300_000, aggregateMs: 600_000, inFlight: 1, queued: 2, clock: new FakeClock() };
    const r = eventRecorder(api.client(), silent, metrics, options);
    let release!: () => void;
    const isEvent = (method: string, path: string) => method === 'POST' && path.endsWith('/events');
    api.faults.push({ match: isEvent, status: 500, remaining: 1, held: new Promise<void>((res) => (release = res)) });
    for (let i = 0; i < 5; i++) r.record(slimWorkload('StatefulSet', statefulSet(`q${i}`, 3)), 'Normal', 'ZoneListFrozen', 'frozen');
    const counted = async (result: string) => (await metrics.actuatorWrites.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
    assert.equal(await counted('dropped'), 2, 'one written, two waiting, two dropped');
    release();
    await r.settle();
    assert.deepEqual([await counted('error'), await counted('ok')], [1, 2]);
    assert.deepEqual([...api.kubeEvents.values()].map((e) => e.involvedObject.name).filter((n) => /^q\d$/.test(n)).sort(), ['q1', 'q2']);
  });

  it('while the writes they report are under way, one at a time; at full width after; each says when it was recorded, not when sent', async () => {
    const clock = new FakeClock();
    let busy = true;
    const options = { burst: 25, refillMs: 300_000, aggregateMs: 600_000, inFlight: 4, queued: 100, busy: () => busy, clock };
    const r = eventRecorder(api.client(), silent, createMetrics(), options);
    const isEvent = (method: string, path: string) => method === 'POST' && path.endsWith('/events');
    const held = () => {
      let release!: () => void;
      return { promise: new Promise<void>((res) => (release = res)), release: () => release() };
    };
    const [first, next] = [held(), held()];
    const faults = [{ match: isEvent, status: 500, remaining: 1, held: first.promise }, { match: isEvent, status: 500, remaining: 4, held: next.promise }];
    api.faults.push(...faults);
    const recordedAt = new Date(clock.now()).toISOString();
    for (let i = 0; i < 7; i++) r.record(slimWorkload('StatefulSet', statefulSet(`w${i}`, 3)), 'Normal', 'ZoneListFrozen', 'frozen');
    await waitFor(() => faults[0]!.remaining === 0, 'the first Event sent');
    await turns(200);
    assert.equal(faults[1]!.remaining, 4, 'no second one while busy');
    busy = false;
    clock.advance(60_000);
    first.release();
    await waitFor(() => faults[1]!.remaining === 0, 'four at once after');
    next.release();
    await r.settle();
    const sent = [...api.kubeEvents.values()].filter((e) => /^w\d$/.test(e.involvedObject.name));
    assert.deepEqual(sent.map((e) => e.involvedObject.name).sort(), ['w5', 'w6']);
    for (const e of sent) assert.equal(e.firstTimestamp, recordedAt, 'the time it was recorded');
  });
});
