import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideAdmission } from '../../src/admission/decide.js';
import { slimPod } from '../../src/cluster/convert.js';
import { parseConfig } from '../../src/common/config.js';
import { NO_SEAT, seatTable, unpublishable, type SeatTableData } from '../../src/placement/seatTable.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { testApp } from '../support/app.js';
import { nodes, pv, pvc, statefulSet, storeOf, stsPod, type PodOpts, type Raw } from '../support/builders.js';

// The seat table (docs/design.md#the-policy): what it publishes is what the decision service
// decides for the same pods, and only what is certain is published.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ZONE = 'topology.kubernetes.io/zone';
const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };
const settings = () => ({ ...parseConfig({}).placement });
const MAX = 512 * 1024;

/** A StatefulSet's pod as its controller creates it: owned by the StatefulSet's UID, its ordinal in the pod-index label. */
function seatPod(sts: string, ordinal: number, o: PodOpts = {}): Raw {
  const p = stsPod(sts, ordinal, { ...o, labels: { 'apps.kubernetes.io/pod-index': String(ordinal) } });
  p.metadata.ownerReferences[0].uid = `sts-${sts}`;
  return p;
}

/**
 * The zone the shipped MutatingAdmissionPolicy writes for `pod` from the table, read as its CEL
 * reads it (manifests/components/policy/policy.yaml); undefined: the pod passes unchanged.
 */
function policyZone(data: SeatTableData, pod: Raw): { key: string; zone: string } | undefined {
  const uid = pod.metadata.ownerReferences.find((r: Raw) => r.controller && r.kind === 'StatefulSet')?.uid as string;
  const ordinal = pod.metadata.labels?.['apps.kubernetes.io/pod-index'] as string;
  const table = (data[uid] ?? '').split(';');
  const seat = /^[0-9]{1,9}$/.test(ordinal) ? data[`${uid}.${ordinal}`] ?? '' : NO_SEAT;
  const key = table.length >= 2 ? table[1]! : '';
  const zones = table.length === 4 && table[0] === 'rr' ? table[3]!.split(',') : [];
  const zone = seat !== '' ? (seat === NO_SEAT ? '' : seat)
    : zones.length > 0 && Number(ordinal) >= Number(table[2]) ? zones[(Number(ordinal) - Number(table[2])) % zones.length]! : '';
  return zone === '' || key === '' || pod.spec.nodeSelector?.[key] !== undefined ? undefined : { key, zone };
}

/** What admission decides for the pod now (the Lease holder, a dry run: nothing reserved). */
async function admitted(store: ClusterStore, pod: Raw) {
  const app = testApp(store);
  return (await decideAdmission(app.service, slimPod(pod), { dryRun: true, leading: true })).decision;
}

describe('the seat table: one answer with the decision service', () => {
  it('a frozen list and plain round-robin: every ordinal the policy computes (live and past replicas) is the pin admission writes', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 6, { annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX);
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
    const { data } = seatTable('default', store, settings(), MAX);
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
    const { data } = seatTable('default', store, settings(), MAX);
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
    const { data } = seatTable('default', store, settings(), MAX);
    assert.equal(data['sts-vol.0'], NO_SEAT);
    assert.equal(policyZone(data, seatPod('vol', 0, { claims: ['data-vol-0'] })), undefined);
  });

  it('a pod whose nodeSelector already names its zone key passes unchanged (the webhook says why)', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: frozen })]);
    const { data } = seatTable('default', store, settings(), MAX);
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
    const before = seatTable('default', storeOf([...nodes(ZONES, 1), old]), settings(), MAX).data;
    const after = seatTable('default', storeOf([...nodes(ZONES, 1), again]), settings(), MAX).data;
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
    const full = seatTable('default', store, settings(), MAX);
    assert.deepEqual(Object.keys(full.data).sort(), ['sts-a', 'sts-b', 'sts-c']);
    const one = Object.entries(full.data)[0]!;
    const small = seatTable('default', store, settings(), one[0].length + one[1].length + 8);
    assert.deepEqual([Object.keys(small.data), small.overflow], [['sts-a'], ['b', 'c']]);
  });
});
