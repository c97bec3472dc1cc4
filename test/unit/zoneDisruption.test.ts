import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterStore } from '../../src/cluster/store.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { workloadHealth } from '../../src/placement/health.js';
import { workloadModel, type CachedModel } from '../../src/placement/model.js';
import { formatApprovals, liveApprovals, parseApprovals, type Approval } from '../../src/placement/disruptionApprovals.js';
import { budgetIn, disruptionState, downPodsAlwaysGo, evictionVerdict, parseBudget, seatMap, zoneBudgetOf } from '../../src/placement/zoneDisruption.js';
import { deployment, node, nodes, rsPod, statefulSet, stsPod, storeOf, type Raw } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NOW = Date.parse('2026-11-27T12:00:00Z');
const APPROVAL_MS = 30_000;
const FROZEN = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': 'zone' };
/** web-i's seat: zone-a, b, c, a, b, c (the frozen list, round robin). */
const seatOf = (i: number) => ZONES[i % 3]!;
const on = (zone: string) => `node-${zone.slice(5)}-1`;

function sts(replicas: number, pods: Raw[], annotations: Record<string, string> = FROZEN, extra: Raw[] = []) {
  const store = storeOf([...nodes(ZONES, 1), ...extra, statefulSet('web', replicas, { annotations }), ...pods]);
  return { store, ...modelOf(store, 'StatefulSet', 'web') };
}
function modelOf(store: ClusterStore, kind: string, name: string) {
  const w = store.workload(kind as 'StatefulSet', 'default', name)!;
  const model = workloadModel({ kind, namespace: 'default', name }, w, store, defaultSettings()) as CachedModel;
  return { w, model, map: seatMap(model, w, store) };
}
/** Six pods on their seats, all Ready, but those `down` names. */
const six = (down: Record<number, Raw> = {}) => Array.from({ length: 6 }, (_, i) => stsPod('web', i, { nodeName: on(seatOf(i)), ready: true, ...down[i] }));
const verdict = (map: ReturnType<typeof seatMap>, pod: string, approvals: Approval[] = [], budget = parseBudget('zone', 'b')) =>
  evictionVerdict('StatefulSet default/web', map, approvals, pod, budget as never, NOW, APPROVAL_MS);

describe('the zone disruption budget: never two zones down at once', () => {
  it('reads the opt-in: "zone", a count, a percentage; a bad value is named', () => {
    assert.deepEqual(parseBudget('zone', 'x'), { kind: 'zone' });
    assert.deepEqual(parseBudget('2', 'x'), { kind: 'count', n: 2 });
    assert.deepEqual(parseBudget('50%', 'x'), { kind: 'percent', p: 50 });
    assert.deepEqual(parseBudget('100%', 'x'), { kind: 'zone' });
    for (const bad of ['0', '-1', '150%', 'zoen', '1e9', '']) assert.match((parseBudget(bad, 'the budget') as { error: string }).error, /^the budget: ".*" is not/);
    assert.equal(zoneBudgetOf(undefined), undefined);
    assert.equal(budgetIn({ kind: 'percent', p: 50 }, 3), 2, 'rounds up, as a PDB');
    assert.equal(budgetIn({ kind: 'percent', p: 1 }, 3), 1, 'at least one');
    assert.equal(budgetIn({ kind: 'zone' }, 4), 4);
  });

  it('maps seats to zones: a pod by its node, a missing ordinal by its seat, a terminating pod as a seat going empty', () => {
    const pods = six({ 1: { terminating: true }, 2: { ready: false } }).filter((p) => p.metadata.name !== 'web-4');
    const { map } = sts(6, pods);
    assert.deepEqual([...map.zones].map(([z, v]) => [z, v.seats, v.down.map((d) => d.what)]), [
      ['zone-a', 2, []],
      ['zone-b', 2, ['pod web-1 is terminating', 'ordinal 4 has no pod']],
      ['zone-c', 2, ['pod web-2 is not Ready']],
    ]);
    assert.equal(map.unplaced, undefined);
  });

  it('allows a whole zone at once, and nothing in a second zone while a seat of the first is down', () => {
    const all = sts(6, six()).map;
    const first = verdict(all, 'web-0');
    assert.equal(first.allowed, true);
    assert.equal(first.zone, 'zone-a');
    const approved = first.allowed ? first.approvals : [];
    assert.deepEqual(approved.map((a) => [a.pod, a.zone]), [['web-0', 'zone-a']]);
    // Same zone: within the whole-zone budget, even while web-0 is only approved (not yet seen terminating).
    const second = verdict(all, 'web-3', approved);
    assert.equal(second.allowed, true, second.why);
    // Another zone: refused, naming what it waits for.
    const other = verdict(all, 'web-1', approved);
    assert.equal(other.allowed, false);
    assert.match(other.why, /zone-a is under disruption; pod web-1 of zone-b may go once every seat outside it is available: waits for pod web-0 is being evicted \(zone-a\)/);
    // Once web-0 is terminating and then replaced but not Ready: still zone-a's.
    const replaced = sts(6, six({ 0: { ready: false } })).map;
    assert.equal(verdict(replaced, 'web-1').allowed, false);
    assert.equal(verdict(replaced, 'web-3').allowed, true);
    // Back up: zone-b may go.
    assert.equal(verdict(sts(6, six()).map, 'web-1', approved.map((a) => ({ ...a, at: NOW - APPROVAL_MS - 1 }))).allowed, true);
  });

  it('a count or a percentage caps a zone: web-3 waits while web-0 is down under a budget of 1', () => {
    const { map } = sts(6, six({ 0: { ready: false } }));
    const v = verdict(map, 'web-3', [], parseBudget('1', 'b') as never);
    assert.equal(v.allowed, false);
    assert.match(v.why, /zone-a has 1 of its 2 seats down, at most 1 at once; pod web-3 waits for pod web-0 is not Ready/);
    assert.equal(verdict(map, 'web-3', [], parseBudget('100%', 'b') as never).allowed, true);
  });

  it('a pod already down may go when no other zone is down (nothing more goes down), and is not recorded', () => {
    const { map } = sts(6, six({ 1: { ready: false } }));
    const v = verdict(map, 'web-1');
    assert.equal(v.allowed, true);
    assert.deepEqual(v.allowed && v.approvals, []);
  });

  it('a pod already down while another zone is down: waits by default and says how it could go; under AlwaysAllow it goes, unrecorded, and only it', () => {
    const pods = six({ 0: { ready: false }, 1: { ready: false } });
    const { map } = sts(6, pods);
    const v = verdict(map, 'web-0');
    assert.equal(v.allowed, false);
    assert.match(v.why, /zone-b is under disruption; .*waits for pod web-1 is not Ready \(zone-b\); web-0 is down already: with zonekeeper\.io\/unhealthy-pod-eviction-policy: AlwaysAllow it would go now$/);
    const always = sts(6, pods, { ...FROZEN, 'zonekeeper.io/unhealthy-pod-eviction-policy': 'AlwaysAllow' });
    assert.equal(downPodsAlwaysGo(always.w), true);
    const go = evictionVerdict('StatefulSet default/web', always.map, [], 'web-0', { kind: 'zone' }, NOW, APPROVAL_MS, { downAlwaysGo: true });
    assert.equal(go.allowed, true, go.why);
    assert.match(go.why, /web-0 is down already \(zonekeeper\.io\/unhealthy-pod-eviction-policy AlwaysAllow\)/);
    assert.deepEqual(go.allowed && go.approvals, [], 'nothing recorded: it takes no seat down');
    // An available pod of zone-a still waits for zone-b.
    const up = evictionVerdict('StatefulSet default/web', always.map, [], 'web-3', { kind: 'zone' }, NOW, APPROVAL_MS, { downAlwaysGo: true });
    assert.equal(up.allowed, false);
    assert.doesNotMatch(up.why, /AlwaysAllow/);
    // The default spelled out is the default; anything else is named, and health says every eviction is refused.
    assert.equal(downPodsAlwaysGo(sts(6, pods, { ...FROZEN, 'zonekeeper.io/unhealthy-pod-eviction-policy': 'IfHealthyBudget' }).w), false);
    const bad = sts(6, pods, { ...FROZEN, 'zonekeeper.io/unhealthy-pod-eviction-policy': 'yes' });
    assert.deepEqual(downPodsAlwaysGo(bad.w), { error: 'zonekeeper.io/unhealthy-pod-eviction-policy: "yes" is not IfHealthyBudget or AlwaysAllow' });
    assert.match(disruptionState(bad.model, bad.w, bad.store)!.error!, /unhealthy-pod-eviction-policy: "yes"/);
  });

  it('a pod on a node that is not Ready is down in its zone', () => {
    const notReady = { ...node('node-c-1', 'zone-c'), status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    const store = storeOf([node('node-a-1', 'zone-a'), node('node-b-1', 'zone-b'), notReady, statefulSet('web', 6, { annotations: FROZEN }), ...six()]);
    const { map } = modelOf(store, 'StatefulSet', 'web');
    const v = verdict(map, 'web-0');
    assert.equal(v.allowed, false);
    assert.match(v.why, /pod web-2 is on node node-c-1, which is not Ready \(zone-c\); pod web-5 is on node node-c-1/);
  });

  it('approvals: one whose pod still stands lapses after approvalSeconds; one whose pod went holds its zone until it is back', () => {
    const standing: Approval = { pod: 'web-0', uid: 'pod-web-0', zone: 'zone-a', at: NOW - 1000 };
    const up = sts(6, six()).map;
    assert.equal(liveApprovals([standing], up, NOW, APPROVAL_MS).length, 1);
    assert.equal(liveApprovals([{ ...standing, at: NOW - APPROVAL_MS }], up, NOW, APPROVAL_MS).length, 0, 'never became an eviction');
    const gone = sts(6, six().filter((p) => p.metadata.name !== 'web-0')).map;
    assert.equal(liveApprovals([{ ...standing, at: NOW - 3_600_000 }], gone, NOW, APPROVAL_MS).length, 1, 'its seat is still empty');
    const back = sts(6, six({ 0: { uid: 'pod-web-0-new' } })).map;
    assert.equal(liveApprovals([{ ...standing, at: NOW - 1000 }], back, NOW, APPROVAL_MS).length, 0, 'its successor is Ready');
    // The record round-trips; garbage in it is dropped; its length is bounded by what the caller allows.
    assert.deepEqual(parseApprovals(formatApprovals([standing])), [standing]);
    assert.deepEqual(parseApprovals('not json'), []);
    assert.deepEqual(parseApprovals(JSON.stringify([{ pod: 1 }, 'x', null, { pod: 'a', uid: 'u', zone: 'z', at: 'never' }])), []);
    assert.equal(parseApprovals(JSON.stringify(Array.from({ length: 5000 }, () => ({ pod: 'a', uid: 'u', zone: 'z', at: '2026-01-01T00:00:00Z' })))).length, 1000);
  });

  it('a retried eviction of an approved pod is allowed again without a second record', () => {
    const map = sts(6, six()).map;
    const first = verdict(map, 'web-0');
    const again = verdict(map, 'web-0', first.allowed ? first.approvals : []);
    assert.equal(again.allowed, true);
    assert.equal(again.allowed && again.approvals.length, 1);
  });

  it('a Deployment: a replica with no pod yet is charged to the zone the approval names, and blocks the others', () => {
    const objects = [...nodes(ZONES, 1), ...deployment('api', 3, { 'zonekeeper.io/zone-preferences': '{}', 'zonekeeper.io/zone-disruption-budget': 'zone' }),
      rsPod('api', 'b', { nodeName: on('zone-b'), ready: true }), rsPod('api', 'c', { nodeName: on('zone-c'), ready: true })];
    const { map } = modelOf(storeOf(objects), 'Deployment', 'api');
    assert.equal(map.unplaced?.count, 1);
    const approval: Approval = { pod: 'api-rs-a', uid: 'pod-api-rs-a', zone: 'zone-a', at: NOW - 5000 };
    const v = evictionVerdict('Deployment default/api', map, [approval], 'api-rs-b', { kind: 'zone' }, NOW, APPROVAL_MS);
    assert.equal(v.allowed, false);
    assert.match(v.why, /zone-a is under disruption/);
    // Without an approval to charge it to, a replica in no known zone blocks every zone.
    const unknown = evictionVerdict('Deployment default/api', map, [], 'api-rs-b', { kind: 'zone' }, NOW, APPROVAL_MS);
    assert.equal(unknown.allowed, false);
    assert.match(unknown.why, /a zone not known yet is under disruption/);
  });

  it('work is bounded by the pods, not by a replica count someone wrote', () => {
    const { map } = sts(1_000_000_000, six());
    assert.equal([...map.zones.values()].reduce((n, z) => n + z.down.length, 0), 64, 'missing ordinals listed one by one only up to a bound');
    assert.ok(map.unplaced && map.unplaced.count > 900_000_000);
  });

  it('health says which zone is under disruption and what it waits for; a workload not opted in says nothing of it', () => {
    const state = { settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map() };
    const { store, w, model } = sts(6, six({ 4: { ready: false } }));
    const h = workloadHealth(model, w, store, state, { now: NOW, settleSeconds: 60 })!;
    assert.deepEqual(h.disruption, { budget: 'zone', down: [{ zone: 'zone-b', count: 1, what: ['pod web-4 is not Ready'] }], approvals: 0 });
    assert.match(h.reason, /under disruption: zone-b \(pod web-4 is not Ready\); evictions in other zones wait \(zone disruption budget zone\)/);
    const plain = sts(6, six({ 4: { ready: false } }), { 'zonekeeper.io/zones': ZONES.join(',') });
    const p = workloadHealth(plain.model, plain.w, plain.store, state, { now: NOW, settleSeconds: 60 })!;
    assert.equal(p.disruption, undefined);
    assert.doesNotMatch(p.reason, /disruption/);
    // A budget that does not parse is said, not left to the 429s alone.
    const bad = sts(6, six(), { ...FROZEN, 'zonekeeper.io/zone-disruption-budget': 'half' });
    const b = workloadHealth(bad.model, bad.w, bad.store, state, { now: NOW, settleSeconds: 60 })!;
    assert.match(b.reason, /zonekeeper\.io\/zone-disruption-budget: "half" is not .*: every eviction of its pods is refused until it does/);
  });

  it('review findings: a pod already down goes even when its zone is over its budget; the newest approvals are read; a time ahead lapses', () => {
    // web-0 and web-3 (zone-a) both not Ready under a budget of 1: either may go, it takes nothing more down.
    const { map } = sts(6, six({ 0: { ready: false }, 3: { ready: false } }));
    const v = verdict(map, 'web-0', [], parseBudget('1', 'b') as never);
    assert.equal(v.allowed, true, v.why);
    assert.match(v.why, /down already/);
    // A record longer than its limit keeps its newest entries (the pods being evicted now).
    const old = Array.from({ length: 40 }, (_, i) => ({ pod: `old-${i}`, uid: `u${i}`, zone: 'zone-a', at: '2026-01-01T00:00:00Z' }));
    const fresh = { pod: 'web-1', uid: 'pod-web-1', zone: 'zone-b', at: new Date(NOW).toISOString() };
    assert.deepEqual(parseApprovals(JSON.stringify([...old, fresh])).at(-1)?.pod, 'web-1');
    // An approval dated far ahead does not hold a zone forever.
    const ahead: Approval = { pod: 'web-0', uid: 'pod-web-0', zone: 'zone-a', at: Date.parse('2099-01-01T00:00:00Z') };
    assert.equal(liveApprovals([ahead], sts(6, six()).map, NOW, APPROVAL_MS).length, 0);
    assert.equal(verdict(sts(6, six()).map, 'web-1', [ahead]).allowed, true);
  });

  it('review findings: an available pod with no zone at all (no seat, a node without the label) is recorded, and holds the others back', () => {
    const objects = [...nodes(ZONES, 1), node('bare-1', undefined), ...deployment('api', 3, { 'zonekeeper.io/zone-preferences': '{}', 'zonekeeper.io/zone-disruption-budget': 'zone' }),
      rsPod('api', 'x', { nodeName: 'bare-1', ready: true }), rsPod('api', 'b', { nodeName: on('zone-b'), ready: true }), rsPod('api', 'c', { nodeName: on('zone-c'), ready: true })];
    const { map } = modelOf(storeOf(objects), 'Deployment', 'api');
    const v = evictionVerdict('Deployment default/api', map, [], 'api-rs-x', { kind: 'zone' }, NOW, APPROVAL_MS);
    assert.equal(v.allowed, true, v.why);
    assert.deepEqual(v.allowed && v.approvals.map((a) => a.zone), ['(no zone)']);
    const next = evictionVerdict('Deployment default/api', map, v.allowed ? v.approvals : [], 'api-rs-b', { kind: 'zone' }, NOW, APPROVAL_MS);
    assert.equal(next.allowed, false, 'another zone waits for it');
  });
});
