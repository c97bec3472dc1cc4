import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiClient } from '../../src/cluster/apiClient.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { fakeClock } from '../../src/common/clock.js';
import { workloadSpreadStatusController } from '../../src/controllers/workloadSpreadStatus.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { deletionCosts } from '../../src/placement/downscale.js';
import { workloadModel } from '../../src/placement/model.js';
import { kruiseStatusJson, rfc3339, workloadSpreadStatus } from '../../src/placement/policies/workloadSpread/status.js';
import { silent } from '../support/app.js';
import { deployment, nodes, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { defaultSettings, FakeClock, filterFor, passedZones } from '../support/placement.js';

// OpenKruise's WorkloadSpread controller as zonekeeper's standalone mode does it
// (docs/design.md#workloadspread): the status of every WorkloadSpread, Kruise's counts, the
// Schedulable condition, and Adaptive's rescheduling of pods left unscheduled in a subset.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const T0 = Date.parse('2026-11-26T08:00:00Z');
const nowhere = (name: string, max?: number) => zoneSubset(name, 'zone-x', max);
const adaptive = (seconds: number) => ({ type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: seconds } });
const ws = (subsets: Raw[], strategy?: Raw, status?: Raw): Raw => ({ ...workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, subsets, strategy), status });

/** A pod of the Deployment matched to `subset` at admission, Pending: unscheduled since `createdAt`. */
function matchedPending(suffix: string, subset: string, createdAt = T0, unschedulable = true): Raw {
  const p = rsPod('web', suffix, { annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'web-ws', subset }) }, createdAt: rfc3339(createdAt) });
  return unschedulable ? { ...p, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } } : p;
}
const spreadOf = (store: ClusterStore) => [...store.workloadSpreads('default')][0]!;
const statusAt = (store: ClusterStore, now: number, reservations = new Reservations(30, new FakeClock())) =>
  workloadSpreadStatus(spreadOf(store), store, defaultSettings(), reservations, now);
const rows = (s: ReturnType<typeof statusAt>) => s.status.subsetStatuses.map((x) => [x.name, x.replicas, x.missingReplicas, x.conditions.map((c) => `${c.status}/${c.reason}`).join()]);

describe('WorkloadSpread status as Kruise counts it', () => {
  it('a WorkloadSpread whose target does not exist yet: observedGeneration and its subsets, nothing in them', () => {
    const store = storeOf([...nodes(ZONES, 1), { ...ws([zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')], adaptive(5)), metadata: { ...ws([]).metadata, generation: 3 } }]);
    const pass = statusAt(store, T0);
    assert.equal(pass.status.observedGeneration, 3);
    assert.deepEqual(rows(pass), [['a', 0, 2, 'True/Sufficient'], ['b', 0, -1, 'True/Sufficient']]);
    assert.deepEqual(kruiseStatusJson(pass.status), {
      observedGeneration: 3,
      subsetStatuses: [
        { name: 'a', replicas: 0, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', lastTransitionTime: '2026-11-26T08:00:00Z' }], missingReplicas: 2 },
        { name: 'b', replicas: 0, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', lastTransitionTime: '2026-11-26T08:00:00Z' }], missingReplicas: -1 },
      ],
    }, 'empty maps left out, as Kruise serializes them');
    // v1beta1 (what Kruise's controller writes since PR #2466): each condition a metav1.Condition, its message written.
    assert.deepEqual((kruiseStatusJson(pass.status, 'apps.kruise.io/v1beta1') as any).subsetStatuses[0].conditions,
      [{ type: 'Schedulable', status: 'True', lastTransitionTime: '2026-11-26T08:00:00Z', reason: 'Sufficient', message: '' }]);
  });

  it('"reschedule subset-a" under Fixed: the two Pending pods count in subset-a (2, missing 0), no condition, and their deletion cost is 200', () => {
    const bound = [0, 1, 2].map((i) => rsPod('web', `b${i}`, { nodeName: 'node-b-1' }));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 5), ...bound, matchedPending('p0', 'subset-a'), matchedPending('p1', 'subset-a'),
      ws([nowhere('subset-a', 2), zoneSubset('subset-b', 'zone-b')], { type: 'Fixed' })]);
    assert.deepEqual(rows(statusAt(store, T0 + 60_000)), [['subset-a', 2, 0, ''], ['subset-b', 3, -1, '']]);
    assert.deepEqual(statusAt(store, T0 + 60_000).unscheduled, [], 'Fixed reschedules nothing');
    const model = workloadModel({ kind: 'Deployment', namespace: 'default', name: 'web' }, store.workload('Deployment', 'default', 'web'), store, defaultSettings());
    const costs = deletionCosts(model, store);
    assert.deepEqual([costs.get('web-rs-p0'), costs.get('web-rs-p1'), costs.get('web-rs-b0')], [200, 200, 100]);
  });

  it('pods the watch does not show yet are creatingPods and taken from missingReplicas; terminating pods are not counted', () => {
    const clock = new FakeClock(T0);
    const reservations = new Reservations(30, clock);
    reservations.reserve({ uid: 'admission/abc', pod: 'default/', workload: 'default/Deployment/web', zone: undefined, subset: 'a', at: T0 });
    const gone = rsPod('web', 'old', { nodeName: 'node-a-1', terminating: true });
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), rsPod('web', 'x', { nodeName: 'node-a-1' }), gone, ws([zoneSubset('a', 'zone-a', 3), zoneSubset('b', 'zone-b')])]);
    const pass = statusAt(store, T0, reservations);
    const modelKey = workloadModel({ kind: 'Deployment', namespace: 'default', name: 'web' }, store.workload('Deployment', 'default', 'web'), store, defaultSettings()).key;
    assert.equal(modelKey, 'default/Deployment/web', 'the key admission reserves under');
    assert.deepEqual(rows(pass), [['a', 1, 1, ''], ['b', 0, -1, '']]);
    assert.deepEqual(pass.status.subsetStatuses[0]!.creatingPods, { abc: '2026-11-26T08:00:00Z' }, 'a pod without a name yet goes by its admission UID');
  });
});

describe('Adaptive: the Schedulable condition and the pods rescheduled', () => {
  const spec = (status?: Raw) => ws([nowhere('subset-a', 2), zoneSubset('subset-b', 'zone-b')], adaptive(5), status);
  const condition = (status: string, reason: string, at: number) => ({ type: 'Schedulable', status, reason, lastTransitionTime: rfc3339(at) });

  it('pods unscheduled beyond rescheduleCriticalSeconds: subset False (PodUnschedulable), listed for deletion, the last subset True; younger ones are waited for', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), matchedPending('p0', 'subset-a'), matchedPending('p1', 'subset-a', T0 + 3_000),
      matchedPending('q', 'subset-b'), spec()]);
    const early = statusAt(store, T0 + 4_000);
    assert.deepEqual(rows(early), [['subset-a', 2, 0, 'True/Sufficient'], ['subset-b', 1, -1, 'True/Sufficient']]);
    assert.equal(early.nextCheckMs, 1_001, 'queued again as the first pod times out');
    const late = statusAt(store, T0 + 6_000);
    assert.deepEqual(rows(late), [['subset-a', 2, 0, 'False/PodUnschedulable'], ['subset-b', 1, -1, 'True/Sufficient']]);
    assert.deepEqual(late.unscheduled.map((u) => [u.subset, u.pod.name, u.heldByVolume]), [['subset-a', 'web-rs-p0', false]]);
    assert.equal(late.nextCheckMs, 2_001, 'and again as the second does');
  });

  it('a pod scheduled, or Pending but not yet found unschedulable (gated), is not rescheduled', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 2), matchedPending('gated', 'subset-a', T0, false), spec()]);
    const pass = statusAt(store, T0 + 60_000);
    assert.deepEqual(pass.unscheduled, []);
    assert.deepEqual(rows(pass)[0], ['subset-a', 1, 1, 'True/Sufficient']);
  });

  it('a pod its bound volume holds marks the subset but is never deleted', () => {
    const stsSpread = { ...workloadSpread('db-ws', { kind: 'StatefulSet', name: 'db' }, [nowhere('subset-a', 2), zoneSubset('subset-b', 'zone-b')], adaptive(5)) };
    const held = stsPod('db', 0, { claims: ['data-db-0'], annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'db-ws', subset: 'subset-a' }) }, createdAt: rfc3339(T0) });
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 1), pv('pv-0', 'zone-x', { claim: 'data-db-0' }), pvc('data-db-0', { volumeName: 'pv-0' }), stsSpread,
      { ...held, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } }]);
    const pass = statusAt(store, T0 + 60_000);
    assert.deepEqual(pass.unscheduled.map((u) => [u.pod.name, u.heldByVolume]), [['db-0', true]]);
    assert.equal(pass.status.subsetStatuses[0]!.conditions[0]!.status, 'False');
  });

  it('recovery: False keeps its time while the window lasts, then True (Sufficient), reported once', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 2), spec({ subsetStatuses: [{ name: 'subset-a', replicas: 0, missingReplicas: 2, conditions: [condition('False', 'PodUnschedulable', T0)] }] })]);
    const within = statusAt(store, T0 + 299_000);
    assert.deepEqual(rows(within)[0], ['subset-a', 0, 2, 'False/PodUnschedulable']);
    assert.equal(within.status.subsetStatuses[0]!.conditions[0]!.lastTransitionTime, rfc3339(T0));
    assert.equal(within.nextCheckMs, 1_001);
    assert.deepEqual(within.recovered, []);
    const after = statusAt(store, T0 + 301_000);
    assert.deepEqual(rows(after)[0], ['subset-a', 0, 2, 'True/Sufficient']);
    assert.deepEqual(after.recovered, ['subset-a']);
  });

  it('switched back to Fixed: the condition is removed', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 2),
      ws([nowhere('subset-a', 2), zoneSubset('subset-b', 'zone-b')], { type: 'Fixed' }, { subsetStatuses: [{ name: 'subset-a', conditions: [condition('False', 'PodUnschedulable', T0)] }] })]);
    assert.deepEqual(rows(statusAt(store, T0 + 1_000)).map((r) => r[3]), ['', '']);
  });

  it('placement skips a subset the status marks unschedulable: a Deployment pod goes to the next subset, a StatefulSet ordinal to the range after it', () => {
    const marked = { subsetStatuses: [{ name: 'a', conditions: [condition('False', 'PodUnschedulable', T0)] }] };
    const subsets = [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b', 2), zoneSubset('c', 'zone-c')];
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 4), ws(subsets, adaptive(5), marked)]);
    const v = filterFor(store, rsPod('web', 'new'));
    assert.deepEqual(passedZones(store, v), ['zone-b']);
    assert.match(v.summary, /a is unschedulable for now/);
    const fixed = storeOf([...nodes(ZONES, 1), ...deployment('web', 4), ws(subsets, { type: 'Fixed' })]);
    assert.deepEqual(passedZones(fixed, filterFor(fixed, rsPod('web', 'new'))), ['zone-a'], 'unmarked, subset a first');
    const sts = storeOf([...nodes(ZONES, 1), statefulSet('db', 5), { ...workloadSpread('db-ws', { kind: 'StatefulSet', name: 'db' }, subsets, adaptive(5)), status: marked }]);
    assert.deepEqual([0, 1, 2, 3].map((i) => passedZones(sts, filterFor(sts, stsPod('db', i))).join()), ['zone-b', 'zone-b', 'zone-c', 'zone-c']);
  });

  it('a pod its matched-workloadspread annotation places is not said to be chosen by the OpenKruise webhook', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 2), spec()]);
    const v = filterFor(store, matchedPending('p', 'subset-b'));
    assert.match(v.summary, /subset subset-b \(named by its apps.kruise.io\/matched-workloadspread annotation\)/);
    assert.doesNotMatch(v.summary, /OpenKruise webhook/);
  });
});

/** The API server as the controller meets it: status patches land in the cache (the watch), evictions delete the pod. */
function fakeApi(store: ClusterStore, refuse = new Set<string>()) {
  const requests: string[] = [];
  const api: ApiClient = {
    server: 'http://fake',
    async request(method, path, opts) {
      requests.push(`${method} ${path}`);
      const evicted = /\/pods\/([^/]+)\/eviction$/.exec(path)?.[1];
      if (evicted) {
        if (refuse.has(evicted)) return { status: 500, body: '{"message":"refused"}' };
        store.delete('pods', `default/${evicted}`);
        return { status: 201, body: '{}' };
      }
      const raw = { ...spreadRaw(store), status: JSON.parse(opts!.body!).status };
      addObject(store, raw);
      return { status: 200, body: JSON.stringify(raw) };
    },
    requestBytes: () => Promise.reject(new Error('unused')),
    stream: () => Promise.reject(new Error('unused')),
  };
  return { api, requests };
}
let lastSpread: Raw;
const spreadRaw = (_store: ClusterStore) => lastSpread;

describe('the status controller (Lease holder): status first, then the evictions, within the budget', () => {
  async function run(opts: { dryRun?: boolean; perMinute?: number; refuse?: string[] } = {}) {
    const clock = fakeClock(T0);
    lastSpread = ws([nowhere('subset-a', 2), zoneSubset('subset-b', 'zone-b')], adaptive(5));
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), matchedPending('p0', 'subset-a'), matchedPending('p1', 'subset-a'), matchedPending('p2', 'subset-a'), lastSpread]);
    const { api, requests } = fakeApi(store, new Set((opts.refuse ?? []).map((n) => `web-rs-${n}`)));
    const events: string[] = [];
    const controller = workloadSpreadStatusController(api, memorySource(store, 'test'), defaultSettings(), new Reservations(30, clock),
      { record: (o, _type, reason, message) => events.push(`${o.name} ${reason}: ${message}`) },
      { intervalSeconds: 60, patchesApplied: true, rescheduleEvictionsPerMinute: opts.perMinute ?? 60, rescheduleDryRun: opts.dryRun ?? false },
      silent, createMetrics(), {}, clock);
    controller.start();
    await clock.advance(6_000);
    await controller.idle();
    return { clock, store, requests, events, controller };
  }
  const evictions = (requests: string[]) => requests.filter((r) => r.endsWith('/eviction')).map((r) => r.split('/').at(-2));

  it('writes the subset False, and only once the cache shows it evicts the pods, then recovers after the window', async () => {
    const { clock, store, requests, events, controller } = await run();
    try {
      const patches = requests.filter((r) => r.startsWith('PATCH'));
      assert.ok(patches.length >= 1);
      assert.ok(requests.indexOf(patches[0]!) < requests.findIndex((r) => r.endsWith('/eviction')), 'the status is durable before any eviction');
      assert.deepEqual(evictions(requests).sort(), ['web-rs-p0', 'web-rs-p1', 'web-rs-p2']);
      assert.equal(spreadOf(store).schedulable.get('subset-a')?.status, 'False');
      await clock.advance(300_000);
      await controller.idle();
      assert.equal(spreadOf(store).schedulable.get('subset-a')?.status, 'True', 'recovered after placement.adaptiveUnschedulableSeconds');
      assert.ok(events.some((e) => /RecoverSchedulable: Subset subset-a of WorkloadSpread default\/web-ws is recovered/.test(e)), events.join('\n'));
    } finally {
      await controller.stop();
    }
  });

  it('the budget: one eviction per minute evicts one now, the next a minute later', async () => {
    const { clock, requests, controller } = await run({ perMinute: 1 });
    try {
      assert.equal(evictions(requests).length, 1);
      await clock.advance(30_000);
      await controller.idle();
      assert.equal(evictions(requests).length, 1, 'not within the minute');
      await clock.advance(35_000);
      await controller.idle();
      assert.equal(evictions(requests).length, 2);
    } finally {
      await controller.stop();
    }
  });

  it('dry run: Events say which pods would go, nothing is evicted and no subset marked; a refused eviction is reported', async () => {
    const dry = await run({ dryRun: true });
    // The status is still written (Kruise's counts), but subset-a stays Schedulable: admission, the gate and the filter keep choosing it.
    assert.ok(dry.requests.some((r) => r.startsWith('PATCH') && r.endsWith('/status')));
    const unmarked = workloadSpreadStatus(spreadOf(dry.store), dry.store, defaultSettings(), new Reservations(30, new FakeClock()), T0 + 6_000, {}, false);
    assert.deepEqual([rows(unmarked).map((r) => r[3]), unmarked.unscheduled.length], [['True/Sufficient', 'True/Sufficient'], 3], 'reported, not marked');
    assert.equal(spreadOf(dry.store).schedulable.get('subset-a')?.status, 'True', 'what was written');
    await dry.clock.advance(60_000);
    await dry.controller.idle();
    await dry.controller.stop();
    assert.deepEqual(evictions(dry.requests), []);
    assert.equal(spreadOf(dry.store).schedulable.get('subset-a')?.status, 'True', 'a minute later too');
    assert.equal(dry.events.filter((e) => / RescheduleWouldDelete: workloadSpread.rescheduleDryRun: pod web-rs-p\d was not scheduled in subset subset-a/.test(e)).length, 3, 'once per pod');
    const refused = await run({ refuse: ['p1'] });
    await refused.controller.stop();
    assert.ok(refused.events.some((e) => /DeletePodFailed: Failed to delete unschedulable Pod default\/web-rs-p1 in Subset subset-a/.test(e)), refused.events.join('\n'));
  });
});
