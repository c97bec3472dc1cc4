// The seat table's writer (docs/design.md#the-policy) on fake time: one ConfigMap per namespace,
// created or replaced conditionally, written only when it changes, written again when a
// StatefulSet changes, a conflict read again; and the detection of the policy API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { seatTableController, servesMutatingPolicies, tableWrites } from '../../src/policy/tableWriter.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent, testApp } from '../support/app.js';
import { nodes, statefulSet, storeOf } from '../support/builders.js';
import { defaultSettings } from '../support/placement.js';
import { recordingApi, type RecordedRequest } from '../support/recordingApi.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };
const CM = '/api/v1/namespaces/default/configmaps';
const T0 = Date.parse('2026-11-26T10:00:00Z');

/** A namespace's ConfigMap kept as the API server keeps it: resourceVersions, and a PUT from an old one refused. */
function configMaps(o: { conflicts?: number; stored?: Record<string, string> } = {}) {
  let stored: { rv: number; data: Record<string, string> } | undefined = o.stored && { rv: 1, data: o.stored };
  let conflicts = o.conflicts ?? 0;
  const answer = (r: RecordedRequest) => {
    if (r.method === 'GET' && r.path === `${CM}/zonekeeper-seats`) {
      return stored ? { status: 200, body: { metadata: { resourceVersion: String(stored.rv) }, data: stored.data } } : { status: 404 };
    }
    if (r.method === 'POST' && r.path === CM) {
      if (stored) return { status: 409 };
      stored = { rv: 1, data: r.body.data };
      return { status: 201 };
    }
    if (r.method === 'PUT' && r.path === `${CM}/zonekeeper-seats`) {
      if (conflicts > 0 || r.body.metadata.resourceVersion !== String(stored?.rv)) {
        conflicts--;
        stored = { rv: stored!.rv + 1, data: stored!.data };
        return { status: 409 };
      }
      stored = { rv: (stored?.rv ?? 0) + 1, data: r.body.data };
      return { status: 200 };
    }
    return { status: 500 };
  };
  return { answer, stored: () => stored };
}

function controller(objects = [statefulSet('db', 3, { annotations: frozen })], o: { conflicts?: number; maxBytes?: number; stored?: Record<string, string> } = {}) {
  const clock = fakeClock(T0);
  const store = storeOf([...nodes(ZONES, 1), ...objects]);
  const cms = configMaps(o);
  const api = recordingApi(cms.answer);
  const events: string[] = [];
  const metrics = createMetrics();
  const tables = tableWrites();
  const c = seatTableController(api, memorySource(store, 'test'), defaultSettings(), testApp(store).service.spec.seatOf,
    { configMapName: 'zonekeeper-seats', maxBytes: o.maxBytes ?? 512 * 1024, patchesPerSecond: 20 },
    { record: (w, type, reason) => events.push(`${w.name} ${type} ${reason}`) }, silent, metrics, clock, tables);
  const writes = () => api.requests.filter((r) => r.method === 'POST' || r.method === 'PUT').map((r) => `${r.method} ${r.body.metadata.resourceVersion ?? '-'}`);
  return { clock, store, c, api, cms, writes, events, metrics, tables };
}

describe('seat table controller (fake time)', () => {
  it('creates the namespace\'s table, then writes nothing while it is the same', async () => {
    const { clock, c, cms, writes } = controller();
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(cms.stored()?.data, { 'sts-db': 'rr;topology.kubernetes.io/zone;0;zone-a,zone-b,zone-c', 'table.generation': String(T0) });
      await clock.advance(15 * 60_000);
      assert.deepEqual(writes(), ['POST -'], 'three resyncs, nothing new to write');
    } finally {
      await c.stop();
    }
  });

  it('a StatefulSet written (its list frozen) is published after the 100 ms that gather a burst, replacing the table from the version read', async () => {
    const { clock, store, c, cms, writes } = controller();
    c.start();
    try {
      await clock.advance(0);
      const late = statefulSet('late', 2, { annotations: { 'zonekeeper.io/zones': 'zone-b,zone-a' } });
      addObject(store, late);
      await clock.advance(99);
      assert.deepEqual(writes(), ['POST -']);
      await clock.advance(1);
      assert.deepEqual(writes(), ['POST -', 'PUT 1']);
      assert.equal(cms.stored()?.data['sts-late'], 'rr;topology.kubernetes.io/zone;0;zone-b,zone-a');
    } finally {
      await c.stop();
    }
  });

  it('each write a new generation, above the one it replaces (another holder\'s clock ahead), remembered for the check; the same seats under another generation: not written', async () => {
    const same = { 'sts-db': 'rr;topology.kubernetes.io/zone;0;zone-a,zone-b,zone-c', 'table.generation': String(T0 + 3_600_000) };
    const { clock, store, c, cms, writes, tables } = controller(undefined, { stored: same });
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(writes(), [], 'the seats are the same');
      await clock.advance(5000);
      addObject(store, statefulSet('late', 2, { annotations: frozen }));
      await clock.advance(100);
      assert.deepEqual(writes(), ['PUT 1']);
      assert.equal(cms.stored()?.data['table.generation'], String(T0 + 3_600_001), 'above the replaced one, not the clock');
      // A pod created 10 s after that write and decided from the table before it is told; one decided from it, or created sooner, is not.
      const after = T0 + 5100 + 10_000;
      assert.deepEqual(tables.newerBefore('default', T0 + 3_600_000, after, 10_000), { generation: T0 + 3_600_001, at: T0 + 5100 });
      assert.equal(tables.newerBefore('default', T0 + 3_600_001, after, 10_000), undefined);
      assert.equal(tables.newerBefore('default', T0 + 3_600_000, after - 1, 10_000), undefined);
      assert.equal(tables.newerBefore('other', 0, after, 10_000), undefined);
    } finally {
      await c.stop();
    }
  });

  it('a table a previous holder wrote is known as written at its generation: a pod decided from an older one is told after a hand-over too', async () => {
    const before = T0 - 60_000;
    const same = { 'sts-db': 'rr;topology.kubernetes.io/zone;0;zone-a,zone-b,zone-c', 'table.generation': String(before) };
    const { clock, c, writes, tables } = controller(undefined, { stored: same });
    assert.equal(tables.newerBefore('default', before - 1, T0, 10_000), undefined, 'nothing known before the table is read');
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(writes(), [], 'the seats are the same: read, not written');
      assert.deepEqual(tables.newerBefore('default', before - 1, T0, 10_000), { generation: before, at: before });
      assert.equal(tables.newerBefore('default', before, T0, 10_000), undefined, 'decided from it');
      assert.equal(tables.newerBefore('default', before - 1, before + 9_999, 10_000), undefined, 'created within the grace');
    } finally {
      await c.stop();
    }
  });

  it('a generation not written as zonekeeper writes it (not digits, past 15 of them) is not built upon: the clock decides', async () => {
    for (const bad of ['1e+300', '9999999999999999', '-5', 'x']) {
      const { clock, store, c, cms } = controller(undefined, { stored: { 'table.generation': bad } });
      c.start();
      try {
        await clock.advance(0);
        addObject(store, statefulSet('late', 2, { annotations: frozen }));
        await clock.advance(100);
        assert.equal(cms.stored()?.data['table.generation'], String(T0 + 100), bad);
      } finally {
        await c.stop();
      }
    }
  });

  it('a conflict reads the table again and writes from the new version; stopped, nothing more', async () => {
    const { clock, store, c, cms, writes } = controller(undefined, { conflicts: 1 });
    c.start();
    await clock.advance(0);
    addObject(store, statefulSet('late', 2, { annotations: frozen }));
    await clock.advance(100);
    assert.deepEqual(writes(), ['POST -', 'PUT 1'], 'refused: another writer moved it');
    await clock.advance(1000);
    assert.deepEqual(writes(), ['POST -', 'PUT 1', 'PUT 2']);
    assert.ok(cms.stored()?.data['sts-late']);
    await c.stop();
    addObject(store, statefulSet('later', 2, { annotations: frozen }));
    await clock.advance(600_000);
    assert.equal(writes().length, 3);
  });

  it('a table past maxBytes leaves StatefulSets out whole: a SeatTableFull Event once, the gauge says how many', async () => {
    const sets = ['a', 'b'].map((n) => statefulSet(n, 3, { annotations: frozen }));
    const { clock, c, cms, events, metrics } = controller(sets, { maxBytes: 164 });
    c.start();
    try {
      await clock.advance(0);
      assert.deepEqual(Object.keys(cms.stored()!.data), ['sts-a', 'table.generation']);
      assert.deepEqual(events, ['b Warning SeatTableFull']);
      await clock.advance(5 * 60_000);
      assert.deepEqual(events, ['b Warning SeatTableFull'], 'not again while it stays out');
      assert.match(await metrics.registry.metrics(), /zonekeeper_seat_table_left_out\{namespace="default"\} 1/);
    } finally {
      await c.stop();
    }
  });
});

describe('seat tables a previous holder wrote', () => {
  it('a table whose StatefulSets all went while no holder ran is found at start (listed by name) and emptied', async () => {
    const clock = fakeClock(Date.parse('2026-11-26T10:00:00Z'));
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: frozen })]);
    const GONE = '/api/v1/namespaces/gone/configmaps/zonekeeper-seats';
    let gone: { rv: number; data: Record<string, string> } = { rv: 7, data: { 'old-uid': 'rr;topology.kubernetes.io/zone;0;zone-a' } };
    const api = recordingApi((r) => {
      // Two pages: the tables are read a page at a time, so that no answer grows with the namespaces.
      if (r.method === 'GET' && r.path.startsWith('/api/v1/configmaps?')) {
        return r.path.includes('continue=')
          ? { status: 200, body: { metadata: {}, items: [{ metadata: { namespace: 'default', name: 'zonekeeper-seats' } }] } }
          : { status: 200, body: { metadata: { continue: 'more' }, items: [{ metadata: { namespace: 'gone', name: 'zonekeeper-seats' } }] } };
      }
      if (r.method === 'GET' && r.path === GONE) return { status: 200, body: { metadata: { resourceVersion: String(gone.rv) }, data: gone.data } };
      if (r.method === 'PUT' && r.path === GONE && r.body.metadata.resourceVersion === String(gone.rv)) {
        gone = { rv: gone.rv + 1, data: r.body.data ?? {} };
        return { status: 200 };
      }
      if (r.path.startsWith(CM)) return r.method === 'GET' ? { status: 404 } : { status: 201 };
      return { status: 500 };
    });
    const c = seatTableController(api, memorySource(store, 'test'), defaultSettings(), testApp(store).service.spec.seatOf,
      { configMapName: 'zonekeeper-seats', maxBytes: 512 * 1024, patchesPerSecond: 20 }, { record: () => {} }, silent, createMetrics(), clock);
    c.start();
    try {
      await clock.advance(0);
      await clock.advance(0);
      const lists = api.requests.filter((r) => r.path.startsWith('/api/v1/configmaps?')).map((r) => r.path);
      assert.deepEqual(lists, ['/api/v1/configmaps?fieldSelector=metadata.name%3Dzonekeeper-seats&limit=16',
        '/api/v1/configmaps?fieldSelector=metadata.name%3Dzonekeeper-seats&limit=16&continue=more'], 'all tables, by name only, 16 a page');
      assert.deepEqual(gone, { rv: 8, data: { 'table.generation': String(T0) } }, 'the dead UID\'s seats are gone');
      await clock.advance(10 * 60_000);
      assert.equal(api.requests.filter((r) => r.method === 'PUT' && r.path === GONE).length, 1, 'emptied once, then left alone');
    } finally {
      await c.stop();
    }
  });
});

describe('whether the API server serves MutatingAdmissionPolicies', () => {
  const asking = (status: number, body?: unknown) => servesMutatingPolicies(recordingApi(() => ({ status, body })));
  it('served in admissionregistration.k8s.io/v1 (1.36+): yes; the group version without it, or absent (1.30-1.35): no; an error: unknown', async () => {
    assert.equal(await asking(200, { resources: [{ name: 'mutatingwebhookconfigurations' }, { name: 'mutatingadmissionpolicies' }] }), true);
    assert.equal(await asking(200, { resources: [{ name: 'mutatingwebhookconfigurations' }, { name: 'validatingadmissionpolicies' }] }), false);
    assert.equal(await asking(404), false);
    assert.equal(await asking(503), undefined);
  });
});
