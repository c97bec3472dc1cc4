// The policy transport checked (docs/design.md#the-policy), on in-memory snapshots and fake time:
// every pod the MutatingAdmissionPolicy marked `zonekeeper.io/decided-by: policy` is decided again
// as admission decides it, once per pod, in the Lease holder; a difference is counted
// (zonekeeper_policy_disagreements_total) and told on the pod (a PolicyDisagrees Event).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addObject } from '../../src/cluster/source.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { fakeClock } from '../../src/common/clock.js';
import { policyCheckController } from '../../src/policy/check.js';
import { tableWrites } from '../../src/policy/tableWriter.js';
import { silent, testApp } from '../support/app.js';
import { nodes, pv, pvc, statefulSet, storeOf, stsPod, type PodOpts, type Raw } from '../support/builders.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ZONE = 'topology.kubernetes.io/zone';
const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };

/** A StatefulSet's pod as the policy leaves it: owned by the StatefulSet's UID, its ordinal labelled, `zone` written and marked. */
function policyPod(sts: string, ordinal: number, zone: string, o: PodOpts & { table?: number } = {}): Raw {
  const p = stsPod(sts, ordinal, {
    ...o, labels: {
      'apps.kubernetes.io/pod-index': String(ordinal), 'zonekeeper.io/decided-by': 'policy',
      ...(o.table !== undefined ? { 'zonekeeper.io/seat-table': String(o.table) } : {}),
    },
    nodeSelector: { ...o.nodeSelector, [ZONE]: zone },
  });
  p.metadata.ownerReferences[0].uid = `sts-${sts}`;
  return p;
}

const T0 = Date.parse('2026-11-26T10:00:00Z');

function checker(objects: Raw[], tables = tableWrites()) {
  const store = storeOf([...nodes(ZONES, 1), ...objects]);
  const app = testApp(store);
  const clock = fakeClock(T0);
  const events: string[] = [];
  const c = policyCheckController(app.source, app.service, { record: (o, type, reason, message) => events.push(`${o.name} ${type} ${reason}: ${message}`) },
    silent, app.metrics, clock, tables);
  const counted = async () => {
    const m = await app.metrics.policyDisagreements.get();
    return Object.fromEntries(m.values.map((v) => [v.labels.reason, v.value]));
  };
  return { store, app, clock, c, events, counted };
}

const NONE = { 'other-zone': 0, 'not-managed': 0, 'other-rule': 0 };

async function running(store: ClusterStore, c: ReturnType<typeof checker>['c'], clock: ReturnType<typeof fakeClock>, pods: Raw[], body: () => Promise<void>) {
  c.start();
  try {
    for (const p of pods) addObject(store, p);
    await clock.advance(1000);
    await c.idle();
    await body();
  } finally {
    await c.stop();
  }
}

describe('policy check (fake time)', () => {
  it('the metric is there at 0 from the start, for every reason', async () => {
    const { app } = checker([]);
    const text = await app.metrics.registry.metrics();
    for (const reason of Object.keys(NONE)) assert.match(text, new RegExp(`^zonekeeper_policy_disagreements_total\\{reason="${reason}"\\} 0$`, 'm'));
  });

  it('agrees: the pin the policy wrote is the one admission writes; nothing counted, no Event', async () => {
    const { store, clock, c, events, counted } = checker([statefulSet('db', 3, { annotations: frozen })]);
    await running(store, c, clock, [0, 1, 2].map((i) => policyPod('db', i, ZONES[i]!)), async () => {
      assert.deepEqual(await counted(), NONE);
      assert.deepEqual(events, []);
      assert.equal(c.checked('pod-db-1'), true);
    });
  });

  it('disagrees by zone: counted once and told on the pod, naming both zones, however often the pod changes after', async () => {
    const { store, clock, c, events, counted } = checker([statefulSet('db', 3, { annotations: frozen })]);
    await running(store, c, clock, [policyPod('db', 1, 'zone-c')], async () => {
      assert.deepEqual(await counted(), { ...NONE, 'other-zone': 1 });
      assert.equal(events.length, 1);
      assert.match(events[0]!, /^db-1 Warning PolicyDisagrees: .*wrote topology\.kubernetes\.io\/zone zone-c .*zonekeeper decides zone-b: .*pinned: ordinal 1 → zone-b/);
      addObject(store, policyPod('db', 1, 'zone-c', { nodeName: 'node-c-1' }));
      await clock.advance(60_000);
      await c.idle();
      assert.deepEqual(await counted(), { ...NONE, 'other-zone': 1 }, 'checked once per pod');
    });
  });

  it('a bound volume decides: the volume\'s zone the policy wrote agrees; the pin it overrides would not', async () => {
    const objects = [statefulSet('vol', 2, { annotations: frozen, claimTemplates: ['data'] }),
      pv('pv-0', 'zone-c', { claim: 'data-vol-0' }), pvc('data-vol-0', { volumeName: 'pv-0' }),
      pv('pv-1', 'zone-c', { claim: 'data-vol-1' }), pvc('data-vol-1', { volumeName: 'pv-1' })];
    const { store, clock, c, events, counted } = checker(objects);
    // Ordinal 0's pin is zone-a, its volume is in zone-c; ordinal 1's pin zone-b, its volume zone-c too.
    await running(store, c, clock, [policyPod('vol', 0, 'zone-c', { claims: ['data-vol-0'] }), policyPod('vol', 1, 'zone-b', { claims: ['data-vol-1'] })], async () => {
      assert.deepEqual(await counted(), { ...NONE, 'other-zone': 1 });
      assert.equal(events.length, 1);
      assert.match(events[0]!, /^vol-1 .*wrote topology\.kubernetes\.io\/zone zone-b .*zonekeeper decides zone-c: .*volume wins/);
      assert.equal(c.checked('pod-vol-0'), true);
    });
  });

  it('a pod of a workload that opted out: zonekeeper writes no zone, counted as not-managed', async () => {
    const { store, clock, c, events, counted } = checker([statefulSet('db', 3, { annotations: { ...frozen, 'zonekeeper.io/ignore': 'true' } })]);
    await running(store, c, clock, [policyPod('db', 0, 'zone-a')], async () => {
      assert.deepEqual(await counted(), { ...NONE, 'not-managed': 1 });
      assert.match(events[0]!, /^db-0 Warning PolicyDisagrees: .*zone-a from the seat table; zonekeeper decides no zone: .*ignore/);
    });
  });

  it('only while started (the Lease holder); a pod zonekeeper cannot decide yet waits; a deleted pod is forgotten', async () => {
    const { store, clock, c, events, counted } = checker([statefulSet('db', 3, { annotations: frozen })]);
    // Seen before the Lease: checked once it is held.
    addObject(store, policyPod('db', 1, 'zone-c'));
    await clock.advance(60_000);
    assert.deepEqual([await counted(), events.length], [NONE, 0], 'nothing without the Lease');
    // Its owner not cached: cannot tell, no count; the StatefulSet arriving and the pod's next event check it.
    const orphan = policyPod('late', 0, 'zone-b');
    await running(store, c, clock, [orphan], async () => {
      assert.deepEqual(await counted(), { ...NONE, 'other-zone': 1 });
      assert.equal(c.checked('pod-late-0'), false);
      addObject(store, statefulSet('late', 1, { annotations: frozen }));
      addObject(store, policyPod('late', 0, 'zone-b', { nodeName: 'node-b-1' }));
      await clock.advance(1000);
      await c.idle();
      assert.deepEqual(await counted(), { ...NONE, 'other-zone': 2 }, 'its pin is zone-a');
      assert.equal(c.checked('pod-late-0'), true);
      store.delete('pods', 'default/late-0');
      assert.equal(c.checked('pod-late-0'), false, 'forgotten with the pod');
    });
  });

  it('decided from a table older than one written 10 s or more before the pod was created: counted per pod, told once per namespace and table', async () => {
    const tables = tableWrites();
    tables.wrote('default', T0 - 60_000, T0 - 60_000);
    tables.wrote('default', T0 - 30_000, T0 - 30_000);
    const { store, app, clock, c, events } = checker([statefulSet('db', 5, { annotations: frozen })], tables);
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    const pods = [
      policyPod('db', 0, 'zone-a', { table: T0 - 60_000, createdAt: at(0) }), // the older table, 30 s after the newer one: stale
      policyPod('db', 1, 'zone-b', { table: T0 - 60_000, createdAt: at(0) }), // the same: counted, not told again
      policyPod('db', 2, 'zone-c', { table: T0 - 30_000, createdAt: at(0) }), // the newest: fresh
      policyPod('db', 3, 'zone-a', { table: T0 - 60_000, createdAt: at(-25) }), // 5 s after the newer one's write: within the lag allowed
      policyPod('db', 4, 'zone-b', { createdAt: at(0) }), // no generation (a policy before it): not judged
    ];
    await running(store, c, clock, pods, async () => {
      assert.equal((await app.metrics.policyStaleTables.get()).values[0]?.value, 2);
      const told = events.filter((e) => e.includes('PolicyReadStaleTable'));
      assert.equal(told.length, 1);
      assert.match(told[0]!, /^db-0 Warning PolicyReadStaleTable: .*written at 2026-11-26T09:59:00.000Z; zonekeeper wrote a newer one 30 s before the pod was created: .*kubernetes#130887/);
    });
  });

  it('a stale read seen by a replica not holding the Lease (not started) is neither counted nor told', async () => {
    const tables = tableWrites();
    tables.wrote('default', T0 - 30_000, T0 - 30_000);
    const { store, app, clock, events } = checker([statefulSet('db', 1, { annotations: frozen })], tables);
    addObject(store, policyPod('db', 0, 'zone-a', { table: T0 - 60_000, createdAt: new Date(T0).toISOString() }));
    await clock.advance(1000);
    assert.equal((await app.metrics.policyStaleTables.get()).values[0]?.value ?? 0, 0);
    assert.deepEqual(events, []);
  });

  it('a pod without the mark is not checked: admission or the gate decided it', async () => {
    const { store, clock, c, counted } = checker([statefulSet('db', 3, { annotations: frozen })]);
    const unmarked = policyPod('db', 1, 'zone-c');
    delete unmarked.metadata.labels['zonekeeper.io/decided-by'];
    await running(store, c, clock, [unmarked], async () => {
      assert.deepEqual(await counted(), NONE);
      assert.equal(c.checked('pod-db-1'), false);
    });
  });
});

describe('how a pod was decided, shown', () => {
  it('/debug/explain says the policy decided it and whether zonekeeper agrees; the layout\'s pods carry the transport', async () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: frozen }),
      policyPod('db', 0, 'zone-a'), policyPod('db', 1, 'zone-c'), stsPod('db', 2, { nodeSelector: { [ZONE]: 'zone-c' } })]);
    const app = testApp(store);
    const explain = async (name: string) => (await app.adminApp.request(`/debug/explain?pod=default/${name}`)).json() as Promise<Raw>;
    const agreed = await explain('db-0');
    assert.equal(agreed.transport.by, 'policy');
    assert.match(agreed.transport.decidedBy, /seat table, in kube-apiserver/);
    assert.equal(agreed.transport.zonekeeperAgrees, true);
    const differs = await explain('db-1');
    assert.deepEqual([differs.transport.zonekeeperAgrees, differs.transport.reason, differs.transport.policyZone, differs.transport.zonekeeperDecides],
      [false, 'other-zone', 'zone-c', 'zone-b']);
    assert.equal((await explain('db-2')).transport, undefined, 'not marked: no transport');
    const layout = await (await app.adminApp.request('/debug/workloads/default/statefulset/db')).json() as Raw;
    const transports = Object.fromEntries(layout.pods.map((p: Raw) => [p.name, p.transport ?? null]));
    assert.deepEqual(transports, { 'db-0': 'policy', 'db-1': 'policy', 'db-2': null });
    assert.ok(layout.pods.every((p: Raw) => p.decidedBy === 'pin'), 'decidedBy keeps meaning the rule');
  });
});
