import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
// The workload model (one per pod, read by every decision) and what it stands on: the kind
// table, the store's indexes, quantities and the filter encoder's escaping.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALL_KIND_NAMES, CORE_KINDS, kindOfObject, objectPath, POD_KIND, WORKLOAD_KINDS, workloadKindNamed,
} from '../../src/cluster/kinds.js';
import { quantity, slimOf, slimPod } from '../../src/cluster/convert.js';
import { encodeError, encodeFilterResult, encodePriorities } from '../../src/extender/wire/encoding.js';
import { scoreNodes } from '../../src/placement/scoring.js';
import { workloadLayout } from '../../src/placement/layout.js';
import { podModel, workloadModel } from '../../src/placement/model.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { candidatesNamed, REASON_MAX, type Rejection } from '../../src/placement/policy.js';
import { type FilterVerdict } from '../../src/placement/verdict.js';
import {
  asPending, deployment, node, nodes, pod, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset,
} from '../support/builders.js';
import { defaultSettings, FakeClock, filterFor, inputFor, passedZones, pickPods } from '../support/placement.js';
import { seededRandom } from '../support/random.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const settings = defaultSettings();

describe('the kind table', () => {
  it('every kind the store holds is in it once, and files of each kind load through it', () => {
    assert.equal(new Set(ALL_KIND_NAMES).size, ALL_KIND_NAMES.length);
    for (const k of CORE_KINDS) if (!k.fieldSelector) assert.equal(kindOfObject(k.kind), k);
    // Autoscaler Events are watched through field selectors only; a file's Events are not loaded.
    assert.equal(kindOfObject('Event', 'v1'), undefined);
    assert.equal(kindOfObject('NodePool', 'karpenter.sh/v1')?.plural, 'nodepools');
    assert.equal(kindOfObject('WorkloadSpread')?.plural, 'workloadspreads');
    assert.equal(kindOfObject('CloneSet')?.plural, 'clonesets');
    assert.equal(kindOfObject('Job', 'batch/v1')?.plural, 'jobs');
    assert.equal(kindOfObject('CronJob', 'batch/v1'), undefined);
  });

  it('names a user types resolve to workload kinds; others do not', () => {
    for (const [text, kind] of [['sts', 'StatefulSet'], ['StatefulSets', 'StatefulSet'], ['deploy', 'Deployment'], ['replicaset', 'ReplicaSet'], ['RS', 'ReplicaSet']] as const) {
      assert.equal(workloadKindNamed(text), kind, text);
    }
    for (const text of ['pods', 'constructor', '__proto__', '']) assert.equal(workloadKindNamed(text), undefined, text);
  });

  it("object paths are the API server's, with names escaped", () => {
    assert.equal(objectPath(WORKLOAD_KINDS.StatefulSet, 'db', 'pg'), '/apis/apps/v1/namespaces/db/statefulsets/pg');
    assert.equal(objectPath(POD_KIND, 'a b', 'x/y'), '/api/v1/namespaces/a%20b/pods/x%2Fy');
  });
});

describe('store indexes', () => {
  it('pods by owner and by node follow rebinding, relabelling and deletion', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 2), stsPod('db', 0, { nodeName: 'node-a-1' })]);
    const owned = () => [...store.podsOwnedBy('StatefulSet', 'default', 'db')].map((p) => p.name);
    const on = (n: string) => [...store.podsOnNode(n)].map((p) => p.name);
    assert.deepEqual(owned(), ['db-0']);
    assert.deepEqual(on('node-a-1'), ['db-0']);
    store.upsert('pods', slimPod(stsPod('db', 0, { nodeName: 'node-b-1' })));
    assert.deepEqual(on('node-a-1'), []);
    assert.deepEqual(on('node-b-1'), ['db-0']);
    store.upsert('pods', slimPod(pod('db-0', { kind: 'StatefulSet', name: 'other' }, { nodeName: 'node-b-1' })));
    assert.deepEqual(owned(), [], "a new owner moves the pod out of the old owner's index");
    store.delete('pods', 'default/db-0');
    assert.deepEqual(on('node-b-1'), []);
    assert.equal(store.podByUid('pod-db-0'), undefined);
  });

  it('seated pods per node follow binding, rebinding, termination, finishing, a new owner and deletion, as a walk would count them', () => {
    const store = storeOf([...nodes(ZONES, 3), ...deployment('web', 6)]);
    const names = ['node-a-1', 'node-a-2', 'node-b-1', undefined];
    const rand = seededRandom(7).below;
    const walked = (owner: string) => {
      const out = new Map<string, number>();
      for (const p of store.podsOwnedBy('ReplicaSet', 'default', owner)) {
        if (p.nodeName && !p.terminating && !p.finished) out.set(p.nodeName, (out.get(p.nodeName) ?? 0) + 1);
      }
      return out;
    };
    for (let step = 0; step < 400; step++) {
      const i = rand(8);
      const owner = rand(5) === 0 ? 'other-rs' : 'web-rs';
      const raw = pod(`p${i}`, { kind: 'ReplicaSet', name: owner }, { nodeName: names[rand(names.length)], terminating: rand(6) === 0 });
      if (rand(7) === 0) raw.status.phase = 'Succeeded';
      if (rand(5) === 0) store.delete('pods', `default/p${i}`);
      else store.upsert('pods', slimPod(raw));
      for (const o of ['web-rs', 'other-rs']) assert.deepEqual(new Map(store.seatedPodsPerNode('ReplicaSet', 'default', o)), walked(o), `step ${step}, ${o}`);
    }
  });

  it("a workload's pods per node sum its ReplicaSets and leave out the pod being placed", () => {
    const store = storeOf([
      ...nodes(ZONES, 2), ...deployment('web', 4),
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-old', namespace: 'default', uid: 'rs-old', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-web', controller: true }] }, spec: { replicas: 1 } },
      rsPod('web', 'a', { nodeName: 'node-a-1' }), rsPod('web', 'b', { nodeName: 'node-a-1' }), rsPod('web', 'c'),
      pod('web-old-x', { kind: 'ReplicaSet', name: 'web-old' }, { nodeName: 'node-a-1' }),
      pod('web-old-y', { kind: 'ReplicaSet', name: 'web-old' }, { nodeName: 'node-b-2' }),
    ]);
    const model = podModel(store.pod('default', 'web-rs-c')!, store, settings)!;
    assert.deepEqual(new Map(model.podsPerNode('none')), new Map([['node-a-1', 3], ['node-b-2', 1]]));
    assert.deepEqual(new Map(model.podsPerNode('pod-web-old-y')), new Map([['node-a-1', 3]]));
    assert.deepEqual(new Map(model.podsPerNode('pod-web-rs-a')), new Map([['node-a-1', 2], ['node-b-2', 1]]));
    assert.deepEqual(new Map(model.podsPerNode('pod-web-rs-a')), new Map([['node-a-1', 2], ['node-b-2', 1]]), "the store's counts are not changed by a read");
  });

  it("one owner and an unbound pod to place: the store's own counts, not a copy", () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3), stsPod('db', 0, { nodeName: 'node-a-1' }), stsPod('db', 1)]);
    const model = podModel(store.pod('default', 'db-1')!, store, settings)!;
    assert.equal(model.podsPerNode('pod-db-1'), store.seatedPodsPerNode('StatefulSet', 'default', 'db'));
    assert.deepEqual(new Map(model.podsPerNode('pod-db-0')), new Map(), 'a bound pod placed again is left out');
  });

  it('workloads by owner, keys and counts per workload kind, and the zone list after a node change', () => {
    const store = storeOf([...nodes(['zone-a'], 1), ...deployment('web', 2), statefulSet('db', 1)]);
    assert.deepEqual([...store.ownedWorkloads('Deployment', 'default', 'web')].map((w) => w.name), ['web-rs']);
    assert.deepEqual(store.keys('statefulsets'), ['StatefulSet/default/db']);
    assert.equal(store.count('deployments'), 1);
    assert.equal(store.count('replicasets'), 1);
    store.delete('replicasets', 'ReplicaSet/default/web-rs');
    assert.deepEqual([...store.ownedWorkloads('Deployment', 'default', 'web')], []);
    assert.deepEqual(store.zones('topology.kubernetes.io/zone'), ['zone-a']);
    store.upsert('nodes', slimOf(kindOfObject('Node')!)(node('node-z', 'zone-z')));
    assert.deepEqual(store.zones('topology.kubernetes.io/zone'), ['zone-a', 'zone-z']);
  });

  it('per-node usage follows binding, moving, finishing and deletion; nodes by zone follow node changes', () => {
    const requests = (p: ReturnType<typeof pod>) => {
      p.spec.containers = [{ name: 'c', resources: { requests: { cpu: '250m', memory: '1Gi' } } }];
      return p;
    };
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 2), requests(stsPod('db', 0, { nodeName: 'node-a-1' })), requests(stsPod('db', 1))]);
    assert.deepEqual(store.nodeUsage('node-a-1'), { cpuMilli: 250, memory: 2 ** 30, pods: 1 });
    store.upsert('pods', slimPod(requests(stsPod('db', 1, { nodeName: 'node-a-1' }))));
    assert.deepEqual(store.nodeUsage('node-a-1'), { cpuMilli: 500, memory: 2 ** 31, pods: 2 });
    store.upsert('pods', slimPod(requests(stsPod('db', 0, { nodeName: 'node-b-1' }))));
    assert.equal(store.nodeUsage('node-a-1').pods, 1);
    assert.equal(store.nodeUsage('node-b-1').cpuMilli, 250);
    const done = requests(stsPod('db', 1, { nodeName: 'node-a-1' }));
    done.status = { phase: 'Succeeded' };
    store.upsert('pods', slimPod(done));
    assert.deepEqual(store.nodeUsage('node-a-1'), { cpuMilli: 0, memory: 0, pods: 0 }, 'a finished pod frees its requests');
    store.delete('pods', 'default/db-0');
    assert.equal(store.nodeUsage('node-b-1').pods, 0);
    assert.deepEqual(store.nodesInZone('topology.kubernetes.io/zone', 'zone-a').map((n) => n.name), ['node-a-1']);
    store.upsert('nodes', slimOf(kindOfObject('Node')!)(node('node-a-2', 'zone-a')));
    assert.deepEqual(store.nodesInZone('topology.kubernetes.io/zone', 'zone-a').map((n) => n.name), ['node-a-1', 'node-a-2']);
  });

  it('a PV is found by its claim, and a re-bound PV leaves the old claim', () => {
    const store = storeOf([pv('v1', 'zone-a', { claim: 'data-0' }), pvc('data-0', { volumeName: 'v1' })]);
    assert.equal(store.pvForClaim('default', 'data-0')?.name, 'v1');
    store.upsert('persistentvolumes', slimOf(kindOfObject('PersistentVolume')!)(pv('v1', 'zone-a', { claim: 'data-1' })));
    assert.equal(store.pvForClaim('default', 'data-0'), undefined);
    assert.equal(store.pvForClaim('default', 'data-1')?.name, 'v1');
  });
});

describe('reservations', () => {
  it('are found by workload, move with a replaced reservation, and expire', () => {
    const clock = new FakeClock();
    const r = new Reservations(30, clock);
    const at = clock.now();
    r.reserve({ uid: 'u1', pod: 'default/a', workload: 'w1', zone: 'zone-a', subset: undefined, at });
    r.reserve({ uid: 'u2', pod: 'default/b', workload: 'w1', zone: 'zone-b', subset: undefined, at });
    r.reserve({ uid: 'u3', pod: 'default/c', workload: 'w2', zone: 'zone-a', subset: undefined, at });
    assert.deepEqual(r.forWorkload('w1').map((x) => x.uid).sort(), ['u1', 'u2']);
    r.reserve({ uid: 'u2', pod: 'default/b', workload: 'w2', zone: 'zone-c', subset: undefined, at });
    assert.deepEqual(r.forWorkload('w1').map((x) => x.uid), ['u1']);
    assert.deepEqual(r.forWorkload('w2').map((x) => x.uid).sort(), ['u2', 'u3']);
    r.release('u1');
    assert.deepEqual(r.forWorkload('w1'), []);
    clock.advance(31_000);
    assert.deepEqual(r.forWorkload('w2'), [], 'expired');
    assert.equal(r.size(), 0);
  });

  it('keep at most max entries and maxBytes, dropping the oldest; a replaced reservation is the youngest', () => {
    const clock = new FakeClock();
    const r = new Reservations(30, clock, 3, 10_000);
    const at = clock.now();
    const make = (uid: string, workload = 'w') => ({ uid, pod: `default/${uid}`, workload, zone: 'zone-a', subset: undefined, at });
    for (const uid of ['u1', 'u2', 'u3']) r.reserve(make(uid));
    r.reserve(make('u1'));
    r.reserve(make('u4'));
    assert.deepEqual(r.forWorkload('w').map((x) => x.uid).sort(), ['u1', 'u3', 'u4'], 'u2 was the oldest');
    const small = new Reservations(30, clock, 100, 2 * (96 + 2 + 'default/u1'.length + 1 + 'zone-a'.length));
    for (const uid of ['u1', 'u2', 'u3']) small.reserve(make(uid));
    assert.equal(small.size(), 2);
    small.reserve({ ...make('huge'), pod: 'x'.repeat(10_000) });
    assert.equal(small.size(), 2, 'one entry over the byte bound is not kept, and evicts nothing');
  });

  it('expire from the oldest, each checked even when the clock went back', () => {
    const clock = new FakeClock();
    const r = new Reservations(30, clock);
    const make = (uid: string) => ({ uid, pod: `default/${uid}`, workload: 'w', zone: 'zone-a', subset: undefined, at: clock.now() });
    r.reserve(make('u1'));
    clock.advance(20_000);
    r.reserve(make('u2'));
    clock.advance(11_000);
    assert.deepEqual(r.forWorkload('w').map((x) => x.uid), ['u2']);
    assert.equal(r.size(), 1);
    clock.advance(-100_000);
    r.reserve(make('u3'));
    clock.advance(100_000 + 5_000);
    assert.deepEqual(r.forWorkload('w').map((x) => x.uid), ['u2'], 'u3, made at an earlier time behind a live u2, has expired');
  });
});

describe('quantities', () => {
  it('reads the suffixes Kubernetes writes, and nothing else', () => {
    const cases: [unknown, number][] = [
      ['500m', 0.5], ['2', 2], ['1.5', 1.5], ['1e3', 1000], ['128Mi', 128 * 2 ** 20], ['1Gi', 2 ** 30], ['2k', 2000], ['+3', 3], [4, 4],
      ['1.5.5', 0], ['12Q', 0], ['1constructor', 0], ['1toString', 0], ['', 0], [undefined, 0], [{}, 0], ['1e999', 0],
    ];
    for (const [text, want] of cases) assert.equal(quantity(text), want, String(text));
  });
});

describe('filter encoder', () => {
  it('names of unknown nodes and reasons with quotes, backslashes, newlines and U+2028 come out as valid JSON, reasons clipped', () => {
    const odd = ['a"b', 'c\\d', 'e\nf', 'g\u2028h', 'plain'];
    const long: Rejection = { rule: 'zone-pin', reason: `"quoted"\n${'x'.repeat(REASON_MAX * 2)}`, unresolvable: true, unknownNames: true };
    const soft: Rejection = { rule: 'cache', reason: 'tab\there', unresolvable: false, unknownNames: true };
    const verdict = {
      managed: false, policy: 'none', summary: '', workload: undefined, model: undefined, effects: {},
      passed: ['ok"1', 'ok2'], passedUnknown: true, rejected: new Map([[long, odd.slice(0, 3)], [soft, odd.slice(3)]]),
    } as FilterVerdict;
    const out = JSON.parse(encodeFilterResult(verdict, undefined, { legacyFailedNodes: false, reportRejectedWhenPlaced: true }));
    assert.deepEqual(out.NodeNames, ['ok"1', 'ok2']);
    assert.deepEqual(Object.keys(out.FailedAndUnresolvableNodes), odd.slice(0, 3));
    assert.deepEqual(Object.keys(out.FailedNodes), odd.slice(3));
    assert.ok(out.FailedAndUnresolvableNodes['a"b'].length <= REASON_MAX);
    assert.equal(out.FailedNodes['g\u2028h'], 'tab\there');
  });

  it('the priority list carries every candidate with a score above 0 once, grouped by score', () => {
    const store = storeOf(nodes(ZONES, 3));
    const names = ['node-a-1', 'node-b-1', 'x"y', 'node-c-1', 'node-a-2', 'node-b-2', 'node-c-2'];
    const candidates = candidatesNamed(names, store);
    const scores = [10, 0, 7, 10, 3, 0, 10];
    const known = (i: number) => candidates.nodes[i] !== undefined;
    const out = JSON.parse(encodePriorities(names, scores, known)) as { Host: string; Score: number }[];
    // kube-scheduler adds nothing for a host it is not sent: 0 is left out.
    assert.deepEqual(Object.fromEntries(out.map((p) => [p.Host, p.Score])), { 'node-a-1': 10, 'x"y': 7, 'node-c-1': 10, 'node-a-2': 3, 'node-c-2': 10 });
    assert.equal(out.length, 5);
    // Equal scores sit together: one join per score.
    const runs = out.map((p) => p.Score).filter((score, i, all) => i === 0 || all[i - 1] !== score);
    assert.equal(runs.length, new Set(runs).size, `one run per score: ${JSON.stringify(out)}`);
    // No scores (an unmanaged pod, or the cache not ready): nothing to add anywhere.
    assert.equal(encodePriorities(names, [], known), '[]');
    assert.equal(encodePriorities([], [], known), '[]');
    // One score for every known node ranks them as none does.
    const cached = names.filter((n) => n !== 'x"y');
    const cachedKnown = () => true;
    assert.equal(encodePriorities(cached, cached.map(() => 7), cachedKnown), '[]');
    // Not every node: those left out would get 0, so the rest are listed.
    assert.equal(JSON.parse(encodePriorities(cached, cached.map((_, i) => (i === 0 ? 0 : 7)), cachedKnown)).length, cached.length - 1);
    assert.equal(JSON.parse(encodePriorities(cached, cached.map((_, i) => (i === 0 ? 6 : 7)), cachedKnown)).length, cached.length);
  });

  it('the filter and prioritize answers stay valid JSON for names the cache does not know, whatever they hold', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]);
    // \u0122 would become a quote if written as Latin-1 unescaped: the route sends the text so.
    const names = ['node-a-1', 'x"y', 'z\\', 'node-b-1', 'nl\n', 'caf\u00e9', '\u0122x', '\u65e5\u672c', '\ud83d\ude00'];
    const ascii = (text: string) => assert.match(text, /^[\x20-\x7e]*$/);
    for (const raw of [stsPod('db', 0), pod('lone', undefined)]) {
      const v = filterFor(store, raw, { candidates: names });
      const text = encodeFilterResult(v, undefined, { legacyFailedNodes: true, reportRejectedWhenPlaced: true });
      ascii(text);
      const out = JSON.parse(text);
      assert.deepEqual([...out.NodeNames, ...Object.keys(out.FailedNodes)].sort(), [...names].sort(), raw.metadata.name);
      const input = inputFor(store, raw, { candidates: names });
      const scores = scoreNodes(input);
      const encoded = encodePriorities(names, scores.map((s) => s || 5), (i) => input.candidates.nodes[i] !== undefined);
      ascii(encoded);
      // One entry per name, any order: kube-scheduler sums scores by host.
      assert.deepEqual(JSON.parse(encoded).map((p: { Host: string }) => p.Host).sort(), [...names].sort());
    }
    const error = encodeError('wait for caf\u00e9 \u0122 "quoted"');
    ascii(error);
    assert.equal(JSON.parse(error).Error, 'wait for caf\u00e9 \u0122 "quoted"');
  });
});

describe('the workload model', () => {
  const prefs = { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' };

  it('one policy per workload, with the seat kind its pods are numbered by', () => {
    const store = storeOf([
      ...nodes(ZONES, 1), statefulSet('db', 3), ...deployment('ids', 2, { 'zonekeeper.io/instance-ids': 'true' }),
      ...deployment('bal', 2, prefs), ...deployment('plain', 2), ...deployment('spread', 2),
      workloadSpread('ws', { kind: 'Deployment', name: 'spread' }, [zoneSubset('a', 'zone-a')]),
    ]);
    const of = (raw: ReturnType<typeof pod>) => podModel(asPending(raw), store, settings);
    const cases = [
      [stsPod('db', 0), 'zone-pin', 'ordinal'], [rsPod('ids', 'x'), 'zone-pin', 'instance-id'], [rsPod('bal', 'x'), 'zone-balance', 'none'],
      [rsPod('plain', 'x'), 'none', 'none'], [rsPod('spread', 'x'), 'workloadspread', 'none'],
    ] as const;
    for (const [raw, policy, seats] of cases) {
      const m = of(raw)!;
      assert.equal(m.policy, policy, raw.metadata.name);
      assert.equal(m.seats, seats, raw.metadata.name);
    }
    assert.equal(of(pod('lone', undefined)), undefined, 'no controller owner, no model');
    assert.equal(of(stsPod('db', 1, { annotations: { 'zonekeeper.io/ignore': 'true' } }))!.policy, 'none');
    assert.equal(podModel(asPending(stsPod('db', 0)), store, { ...settings, manageStatefulSets: false })!.policy, 'none');
  });

  it('waits, naming the owner, while a ReplicaSet or its Deployment is not cached', () => {
    const store = storeOf([...nodes(ZONES, 1), deployment('web', 2)[1]!]);
    const m = podModel(asPending(rsPod('web', 'x')), store, settings)!;
    assert.equal(m.policy, 'wait');
    assert.equal(m.policy === 'wait' && m.why, 'Deployment default/web is not in the cache yet');
    const sts = podModel(asPending(stsPod('db', 0)), store, settings)!;
    assert.deepEqual(sts.policy === 'wait' && [sts.governs, sts.why], ['zone-pin', 'StatefulSet default/db is not in the cache yet'], 'a StatefulSet not cached yet waits as a pin');
    const orphan = podModel(asPending(rsPod('gone', 'x')), storeOf([]), settings)!;
    assert.equal(orphan.policy === 'wait' && orphan.why, 'ReplicaSet default/gone-rs is not in the cache yet');
  });

  it('seats: ordinals count from spec.ordinals.start; pods without one say why', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { ordinalsStart: 5 })]);
    const m = workloadModel({ kind: 'StatefulSet', namespace: 'default', name: 'db' }, store.workload('StatefulSet', 'default', 'db'), store, settings);
    const seat = m.seat(asPending(stsPod('db', 7)));
    assert.deepEqual([seat.index, seat.label, seat.missing], [2, 'ordinal 7 (index 2)', 'zone pin: cannot read an ordinal ≥ 5 from pod db-7']);
    assert.equal(m.seat(asPending(pod('db-x', { kind: 'StatefulSet', name: 'db' }))).index, -1);
  });

  it('the filter, the picker and the debug view read one zone list (zone balance, freezing on and off)', () => {
    const zoneOfPod = (store: ReturnType<typeof storeOf>, name: string) => store.node(store.pod('default', name)!.nodeName)!.labels['topology.kubernetes.io/zone'];
    for (const freezeZones of [true, false]) {
      const s = { ...settings, freezeZones };
      const bound = ['p0', 'p1', 'p2'].map((n, i) => rsPod('bal', n, { nodeName: `node-${'abc'[i]}-1` }));
      const store = storeOf([...nodes(ZONES, 1), ...deployment('bal', 3, prefs), ...bound]);
      const list = workloadLayout(store, 'Deployment', 'default', 'bal', { settings: s, reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map() })!.zones.list;
      // Two replicas keep the list's first two zones: the picker removes the third's pod.
      const removed = pickPods('default', 1, bound.map((p) => p.metadata.name), store, s).chosen_pods[0]!;
      assert.equal(zoneOfPod(store, removed), list[2], `freezeZones ${freezeZones}: ${list}`);
      // A fourth replica takes the sequence's fourth seat: the list's first zone.
      const grown = storeOf([...nodes(ZONES, 1), ...deployment('bal', 4, prefs), ...bound]);
      const v = filterFor(grown, rsPod('bal', 'new'), { settings: s });
      assert.deepEqual(passedZones(grown, v), [list[0]], `freezeZones ${freezeZones}: ${list}`);
      assert.deepEqual([...v.summary.matchAll(/(zone-\w) \d\/\d/g)].map((m) => m[1]), list, v.summary);
    }
  });
});
