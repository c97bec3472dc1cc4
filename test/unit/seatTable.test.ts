import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimPod } from '../../src/cluster/convert.js';
import { parseConfig } from '../../src/common/config.js';
import { NO_SEAT, seatTable, unpublishable, unsureBinding, type SeatTableData } from '../../src/policy/seatTable.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { testApp } from '../support/app.js';
import { advancedStatefulSet, astsPod, nodes, pv, pvc, statefulSet, storeOf, stsPod, type PodOpts, type Raw } from '../support/builders.js';

// The seat table (docs/design.md#the-policy): what it publishes is what the decision service
// decides for the same pods, and only what is certain is published.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ZONE = 'topology.kubernetes.io/zone';
const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };
const settings = () => ({ ...parseConfig({}).placement });
const MAX = 512 * 1024;
/** The seats the decision service gives: what the table publishes. */
const seats = (store: ClusterStore) => testApp(store).service.spec.seatOf;
/** A namespace's table over a store, its seats asked of that store's decision service. */
const tableOf = (store: ClusterStore, s: ReturnType<typeof settings>, max: number) => seatTable('default', store, s, max, seats(store));

/** A StatefulSet's pod as its controller creates it: owned by the StatefulSet's UID, its ordinal in the pod-index label. */
function seatPod(sts: string, ordinal: number, o: PodOpts = {}): Raw {
  const p = stsPod(sts, ordinal, { ...o, labels: { 'apps.kubernetes.io/pod-index': String(ordinal) } });
  p.metadata.ownerReferences[0].uid = `sts-${sts}`;
  return p;
}

/** The pod's controller owner as the policy matches it: a StatefulSet of apps/v1 or of apps.kruise.io. */
const seatOwner = (pod: Raw): Raw | undefined => (pod.metadata.ownerReferences ?? [])
  .find((r: Raw) => r.controller && r.kind === 'StatefulSet' && (r.apiVersion === 'apps/v1' || String(r.apiVersion).startsWith('apps.kruise.io/')));

/**
 * The zone the shipped MutatingAdmissionPolicy writes for `pod` from the table, read as its CEL
 * reads it (manifests/components/policy/policy.yaml); undefined: the pod passes unchanged.
 */
function policyZone(data: SeatTableData, pod: Raw): { key: string; zone: string } | undefined {
  const owner = seatOwner(pod);
  if (!owner) return undefined;
  const uid = owner.uid as string;
  const label = (pod.metadata.labels?.['apps.kubernetes.io/pod-index'] ?? '') as string;
  const name = (pod.metadata.name ?? '') as string;
  const index = /^[0-9]+$/.test(label) ? label : name.startsWith(`${owner.name}-`) ? name.slice(owner.name.length + 1) : '';
  const ordinal = /^(0|[1-9][0-9]{0,8})$/.test(index) ? index : '';
  const table = (data[uid] ?? '').split(';');
  const seat = ordinal !== '' ? data[`${uid}.${ordinal}`] ?? '' : NO_SEAT;
  const key = table.length >= 2 ? table[1]! : '';
  const zones = table.length === 4 && table[0] === 'rr' ? table[3]!.split(',') : [];
  const zone = seat !== '' ? (seat === NO_SEAT ? '' : seat)
    : zones.length > 0 && Number(ordinal) >= Number(table[2]) ? zones[(Number(ordinal) - Number(table[2])) % zones.length]! : '';
  return zone === '' || key === '' || pod.spec.nodeSelector?.[key] !== undefined ? undefined : { key, zone };
}

/** What admission decides for the pod now (the Lease holder, a dry run: nothing reserved). */
async function admitted(store: ClusterStore, pod: Raw) {
  const app = testApp(store);
  return app.service.spec.admit(slimPod(pod), { created: pod, dryRun: true, leading: true });
}

describe('the seat table: one answer with the decision service', () => {
  it('a frozen list and plain round-robin: every ordinal the policy computes (live and past replicas) is the pin admission writes', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 6, { annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    assert.deepEqual(data, { 'sts-db': `rr;${ZONE};0;${ZONES.join(',')}` });
    for (let ordinal = 0; ordinal < 9; ordinal++) {
      const pod = seatPod('db', ordinal);
      const d = await admitted(store, pod);
      assert.equal(d.kind, 'zone', `ordinal ${ordinal}`);
      assert.deepEqual(policyZone(data, pod), d.kind === 'zone' ? { key: d.topologyKey, zone: d.zone } : undefined, `ordinal ${ordinal}`);
    }
  });

  it('ordinals.start: seat k is ordinal start + k, as the pin reads it', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': 'zone-c,zone-a,zone-b' }, ordinalsStart: 5 })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    for (const ordinal of [5, 6, 7, 8]) {
      const d = await admitted(store, seatPod('db', ordinal));
      assert.deepEqual(policyZone(data, seatPod('db', ordinal)), d.kind === 'zone' ? { key: d.topologyKey, zone: d.zone } : undefined, `ordinal ${ordinal}`);
    }
    assert.equal(policyZone(data, seatPod('db', 5))?.zone, 'zone-c');
  });

  it('claims: a volume bound in another zone is the ordinal\'s entry, one in its pin\'s zone keeps the pin, an unbound Immediate claim and an uncreated one get none', async () => {
    const store = storeOf([
      ...nodes(ZONES, 1), statefulSet('vol', 4, { annotations: frozen, claimTemplates: ['data'] }),
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'now' }, provisioner: 'x', volumeBindingMode: 'Immediate' },
      pv('pv-0', 'zone-c', { claim: 'data-vol-0' }), pvc('data-vol-0', { volumeName: 'pv-0' }),
      pv('pv-1', 'zone-b', { claim: 'data-vol-1' }), pvc('data-vol-1', { volumeName: 'pv-1' }),
      pvc('data-vol-2', { storageClassName: 'now' }),
    ]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    assert.deepEqual(data, { 'sts-vol': `listed;${ZONE}`, 'sts-vol.0': 'zone-c', 'sts-vol.1': 'zone-b' });
    for (const ordinal of [0, 1]) {
      const pod = seatPod('vol', ordinal, { claims: [`data-vol-${ordinal}`] });
      const d = await admitted(store, pod);
      assert.deepEqual(policyZone(data, pod), d.kind === 'zone' ? { key: d.topologyKey, zone: d.zone } : undefined, `ordinal ${ordinal}`);
    }
    // No entry: the pod passes to the webhook, which gates it (its volume may still move).
    const pending = seatPod('vol', 2, { claims: ['data-vol-2'] });
    assert.equal(policyZone(data, pending), undefined);
    assert.equal((await admitted(store, pending)).kind, 'gate');
    assert.equal(policyZone(data, seatPod('vol', 3, { claims: ['data-vol-3'] })), undefined, 'a claim not created yet: no entry');
  });

  it('a volume spanning zones that do not include the pin: "-", no single zone, as the pin decides', () => {
    const span = [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b', 'zone-c'] }] }];
    const store = storeOf([...nodes(ZONES, 1), statefulSet('vol', 1, { annotations: frozen, claimTemplates: ['data'] }),
      pv('pv-0', undefined, { claim: 'data-vol-0', affinity: span }), pvc('data-vol-0', { volumeName: 'pv-0' })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    assert.equal(data['sts-vol.0'], NO_SEAT);
    assert.equal(policyZone(data, seatPod('vol', 0, { claims: ['data-vol-0'] })), undefined);
  });

  it('a pod whose nodeSelector already names its zone key passes unchanged (the webhook says why)', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    assert.equal(policyZone(data, seatPod('db', 0, { nodeSelector: { [ZONE]: 'zone-b' } })), undefined);
  });
});

describe('the seat table: only what is certain', () => {
  const why = (sts: Raw, extra: Raw[] = [], s = settings()) => {
    const store = storeOf([...nodes(ZONES, 1), sts, ...extra]);
    return unpublishable(store.workload('StatefulSet', 'default', sts.metadata.name)!, store, s);
  };

  it('a list not frozen yet, zone preferences, an adaptive fallback, a template\'s own claim, an opted-out StatefulSet, a zone no nodeSelector takes: no entry, and the reason', () => {
    assert.match(why(statefulSet('db', 3))!, /not frozen/);
    assert.match(why(statefulSet('db', 3, { annotations: { ...frozen, 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' } }))!, /preferences/);
    assert.match(why(statefulSet('db', 3, { annotations: frozen }), [], { ...settings(), zoneFallback: 'adaptive' })!, /adaptive/);
    const shared = statefulSet('db', 3, { annotations: frozen });
    shared.spec.template = { spec: { volumes: [{ name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }] } };
    assert.match(why(shared)!, /claim of its own/);
    assert.match(why(statefulSet('db', 3, { annotations: { ...frozen, 'zonekeeper.io/ignore': 'true' } }))!, /opted out|not a zone pin/);
    assert.match(why(statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': 'zone-a,zone;b' } }))!, /not a valid label/);
    assert.equal(why(statefulSet('db', 3, { annotations: frozen })), undefined);
  });

  it('keyed by UID: a StatefulSet recreated under its name never reads the old one\'s seats', () => {
    const old = statefulSet('db', 3, { annotations: frozen });
    const again = { ...old, metadata: { ...old.metadata, uid: 'sts-db-again', annotations: { 'zonekeeper.io/zones': 'zone-b,zone-c,zone-a' } } };
    const before = tableOf(storeOf([...nodes(ZONES, 1), old]), settings(), MAX).data;
    const after = tableOf(storeOf([...nodes(ZONES, 1), again]), settings(), MAX).data;
    assert.deepEqual(Object.keys(before), ['sts-db']);
    assert.deepEqual(Object.keys(after), ['sts-db-again']);
    const pod = seatPod('db', 0);
    pod.metadata.ownerReferences[0].uid = 'sts-db-again';
    assert.equal(policyZone({ ...before, ...after }, pod)?.zone, 'zone-b');
  });

  it('bounded: what does not fit in maxBytes is left out whole and named; other namespaces are not in it', () => {
    const sets = ['a', 'b', 'c'].map((n) => statefulSet(n, 3, { annotations: frozen }));
    const elsewhere = statefulSet('x', 3, { annotations: frozen, namespace: 'other' });
    elsewhere.metadata.uid = 'sts-x';
    const store = storeOf([...nodes(ZONES, 1), ...sets, elsewhere]);
    const full = seatTable('default', store, settings(), MAX, seats(store));
    assert.deepEqual(Object.keys(full.data).sort(), ['sts-a', 'sts-b', 'sts-c']);
    const one = Object.entries(full.data)[0]!;
    const small = seatTable('default', store, settings(), one[0].length + one[1].length + 8, seats(store));
    assert.deepEqual([Object.keys(small.data), small.overflow], [['sts-a'], ['b', 'c']]);
  });
});

/** A StorageClass as `kubectl get sc -o yaml` shows it. */
const storageClass = (name: string, mode: 'WaitForFirstConsumer' | 'Immediate', o: { isDefault?: boolean; allowedTopologies?: Raw[] } = {}): Raw => ({
  apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: mode,
  metadata: { name, annotations: o.isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : undefined },
  ...(o.allowedTopologies ? { allowedTopologies: o.allowedTopologies } : {}),
});

/** A StatefulSet whose one claim template `data` names `className` (undefined: none, the default class's). */
function claimedSet(name: string, replicas: number, className: string | undefined, extra: { ordinalsStart?: number } = {}): Raw {
  const sts = statefulSet(name, replicas, { annotations: frozen, claimTemplates: ['data'], ...extra });
  if (className !== undefined) sts.spec.volumeClaimTemplates[0].spec = { storageClassName: className };
  return sts;
}

/** Admission's decision for ordinal `o` as its controller creates it: the claim first (Pending under `className` unless it exists), then the pod. */
async function admittedWithClaim(objects: Raw[], sts: string, ordinal: number, className: string) {
  const claim = `data-${sts}-${ordinal}`;
  const has = objects.some((o) => o.metadata?.name === claim || o.spec?.claimRef?.name === claim);
  const store = storeOf([...objects, ...(has ? [] : [pvc(claim, { storageClassName: className })])]);
  const pod = seatPod(sts, ordinal, { claims: [claim] });
  const d = await admitted(store, pod);
  return { pod, decided: d.kind === 'zone' ? { key: d.topologyKey, zone: d.zone } : undefined, kind: d.kind };
}

describe('the seat table: claims under WaitForFirstConsumer binding', () => {
  it('the default class binds where the pod goes: rr, with an exception for each bound claim away from its pin (far past replicas too) and for a Pending Immediate one', async () => {
    const objects = [
      ...nodes(ZONES, 1), claimedSet('db', 3, undefined), storageClass('local', 'WaitForFirstConsumer', { isDefault: true }),
      storageClass('fast', 'Immediate'),
      pv('pv-0', 'zone-a', { claim: 'data-db-0' }), pvc('data-db-0', { volumeName: 'pv-0', storageClassName: 'local' }),
      pv('pv-1', 'zone-c', { claim: 'data-db-1' }), pvc('data-db-1', { volumeName: 'pv-1', storageClassName: 'local' }),
      pvc('data-db-2', { storageClassName: 'fast' }),
      // Kept by a scale-down long ago: ordinal 153 pins to zone-a, its volume is in zone-b.
      pv('pv-153', 'zone-b', { claim: 'data-db-153' }), pvc('data-db-153', { volumeName: 'pv-153', storageClassName: 'local' }),
      // Pre-bound, no claim yet: ordinal 4 pins to zone-b.
      pv('pv-4', 'zone-c', { claim: 'data-db-4' }),
      // Another StatefulSet's claim, and one not named as a controller names it.
      pvc('data-dbx-7', { storageClassName: 'fast' }), pvc('data-db-07', { storageClassName: 'fast' }),
    ];
    const { data } = tableOf(storeOf(objects), settings(), MAX);
    assert.deepEqual(data, {
      'sts-db': `rr;${ZONE};0;${ZONES.join(',')}`, 'sts-db.1': 'zone-c', 'sts-db.2': NO_SEAT, 'sts-db.4': 'zone-c', 'sts-db.153': 'zone-b',
    });
    for (const ordinal of [0, 1, 3, 4, 5, 6, 153, 200]) {
      const { pod, decided, kind } = await admittedWithClaim(objects, 'db', ordinal, 'local');
      assert.equal(kind, 'zone', `ordinal ${ordinal}`);
      assert.deepEqual(policyZone(data, pod), decided, `ordinal ${ordinal}`);
    }
    // The Pending Immediate claim: no entry, and admission gates it.
    const pending = await admittedWithClaim(objects, 'db', 2, 'fast');
    assert.equal(policyZone(data, pending.pod), undefined);
    assert.equal(pending.kind, 'gate');
  });

  it('a class named by the template, and ordinals.start: claims below start are not published, seats count from start', async () => {
    const objects = [
      ...nodes(ZONES, 1), claimedSet('db', 2, 'local', { ordinalsStart: 5 }), storageClass('local', 'WaitForFirstConsumer'),
      pv('pv-2', 'zone-c', { claim: 'data-db-2' }), pvc('data-db-2', { volumeName: 'pv-2', storageClassName: 'local' }),
      pv('pv-5', 'zone-b', { claim: 'data-db-5' }), pvc('data-db-5', { volumeName: 'pv-5', storageClassName: 'local' }),
    ];
    const { data } = tableOf(storeOf(objects), settings(), MAX);
    assert.deepEqual(data, { 'sts-db': `rr;${ZONE};5;${ZONES.join(',')}`, 'sts-db.5': 'zone-b' });
    for (const ordinal of [5, 6, 7, 8]) {
      const { pod, decided } = await admittedWithClaim(objects, 'db', ordinal, 'local');
      assert.deepEqual(policyZone(data, pod), decided, `ordinal ${ordinal}`);
    }
  });

  it('not certain: static binding (""), an unknown class, an Immediate one, allowedTopologies, no default, a second default that binds Immediately: listed, bound ordinals only', () => {
    const topo = [{ matchLabelExpressions: [{ key: ZONE, values: ['zone-a'] }] }];
    const cases: [string | undefined, Raw[]][] = [
      ['', [storageClass('local', 'WaitForFirstConsumer', { isDefault: true })]],
      ['gone', []],
      ['fast', [storageClass('fast', 'Immediate')]],
      ['zoned', [storageClass('zoned', 'WaitForFirstConsumer', { allowedTopologies: topo })]],
      [undefined, [storageClass('local', 'WaitForFirstConsumer')]],
      [undefined, [storageClass('local', 'WaitForFirstConsumer', { isDefault: true }), storageClass('fast', 'Immediate', { isDefault: true })]],
    ];
    for (const [className, classes] of cases) {
      const store = storeOf([...nodes(ZONES, 1), claimedSet('db', 3, className), ...classes,
        pv('pv-1', 'zone-c', { claim: 'data-db-1' }), pvc('data-db-1', { volumeName: 'pv-1' })]);
      assert.match(unsureBinding(store.workload('StatefulSet', 'default', 'db')!, store)!, /class|static/i, String(className));
      assert.deepEqual(seatTable('default', store, settings(), MAX, seats(store)).data, { 'sts-db': `listed;${ZONE}`, 'sts-db.1': 'zone-c' }, String(className));
    }
  });

  it('a StorageClass marked default later: the table follows it (the class decides what the next claim gets)', () => {
    const objects = [...nodes(ZONES, 1), claimedSet('db', 3, undefined)];
    assert.equal(tableOf(storeOf([...objects, storageClass('local', 'WaitForFirstConsumer')]), settings(), MAX).data['sts-db'], `listed;${ZONE}`);
    assert.match(tableOf(storeOf([...objects, storageClass('local', 'WaitForFirstConsumer', { isDefault: true })]), settings(), MAX).data['sts-db']!, /^rr;/);
  });
});

describe('the seat table: Advanced StatefulSets (apps.kruise.io)', () => {
  /** Its pod as Kruise creates it: named <sts>-<ordinal>, the pod-index label only from Kruise 1.7 with PodIndexLabel on. */
  const kruisePod = (sts: string, ordinal: number, labelled: boolean) => {
    const p = astsPod(sts, ordinal);
    if (!labelled) delete p.metadata.labels;
    p.metadata.ownerReferences[0].uid = `asts-${sts}`;
    return p;
  };

  it('reserved ordinals do not move the others: every ordinal the policy computes, from the label or from the name, is the pin admission writes', async () => {
    const store = storeOf([...nodes(ZONES, 1), advancedStatefulSet('db', 4, { reserveOrdinals: [1, '5-6'], annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    assert.deepEqual(data, { 'asts-db': `rr;${ZONE};0;${ZONES.join(',')}` });
    for (const ordinal of [0, 2, 3, 4, 7, 8]) {
      for (const labelled of [true, false]) {
        const pod = kruisePod('db', ordinal, labelled);
        assert.ok(seatOwner(pod), 'the policy matches it');
        const d = await admitted(store, pod);
        assert.equal(d.kind, 'zone', `ordinal ${ordinal}`);
        assert.deepEqual(policyZone(data, pod), d.kind === 'zone' ? { key: d.topologyKey, zone: d.zone } : undefined, `ordinal ${ordinal} labelled ${labelled}`);
      }
    }
  });

  it('an ordinal not written as a controller writes it ("07", a name of another owner): no entry, never a guess', () => {
    const store = storeOf([...nodes(ZONES, 1), advancedStatefulSet('db', 4, { annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX, seats(store));
    const odd = kruisePod('db', 7, false);
    odd.metadata.labels = { 'apps.kubernetes.io/pod-index': '07' };
    assert.equal(policyZone(data, odd), undefined);
    const renamed = kruisePod('db', 7, false);
    renamed.metadata.name = 'other-7';
    assert.equal(policyZone(data, renamed), undefined);
    assert.equal(policyZone(data, kruisePod('db', 7, false))?.zone, 'zone-b');
  });
});
