import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimPod } from '../../src/cluster/convert.js';
import { NOT_SYNCED } from '../../src/decision/recording.js';
import { deployment, nodes, rsPod, statefulSet, storeOf, stsPod, type Raw } from '../support/builders.js';
import { testApp } from '../support/app.js';

// The one decision service every transport calls (docs/design.md#data-flow): one reservation
// ledger, one decision log by pod and verb, readiness said once.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const gated = (raw: Raw) => ({ ...raw, metadata: { ...raw.metadata, resourceVersion: '42' }, spec: { ...raw.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } });
const balanced = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 } } }) };

describe('one decision service for every transport', () => {
  it('one ledger: pods decided by the gate, admission and the filter in turn each see the reservations of those before (a balanced Deployment of 3 gets 1/1/1)', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), ...deployment('web', 3, balanced)]));
    const gate = await app.service.spec.ungate(slimPod(gated(rsPod('web', 'p0'))));
    const admitted = await app.service.spec.admit(slimPod(rsPod('web', 'p1')), { created: rsPod('web', 'p1'), dryRun: false, leading: true });
    const res = await app.post('/filter', { Pod: rsPod('web', 'p2'), NodeNames: ZONES.map((z) => `node-${z.slice(-1)}-1`) });
    const filtered = (await res.json()).NodeNames as string[];
    assert.equal(app.service.views.reservationCount(), 3);
    const zones = [gate.kind === 'zone' && gate.zone, admitted.kind === 'zone' && admitted.zone, `zone-${filtered[0]?.split('-')[1]}`];
    assert.equal(filtered.length, 1, `the filter passes the one zone left: ${filtered.join(',')}`);
    assert.deepEqual([...zones].sort(), ZONES);
  });

  it('one log: a pod\'s decisions by the gate and the filter are kept together, by verb; only the extender\'s carry its wire mode', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } })]));
    await app.service.spec.ungate(slimPod(gated(stsPod('db', 0))));
    await app.post('/filter', { Pod: stsPod('db', 0), NodeNames: ['node-a-1', 'node-b-1'] });
    const kept = app.service.views.decisionsFor('default/db-0');
    assert.deepEqual(kept.map((d) => [d.verb, d.outcome, d.mode]), [['gate', 'ungated', undefined], ['filter', 'placed', 'NodeNames']]);
  });

  it('never decided blind, said once: the filter, the gate and admission give the same reason on a cache not synced', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3)]), { synced: () => false });
    const filter = await (await app.post('/filter', { Pod: stsPod('db', 0), NodeNames: ['node-a-1'] })).json();
    const gate = await app.service.spec.ungate(slimPod(gated(stsPod('db', 0))));
    const admitted = await app.service.spec.admit(slimPod(stsPod('db', 0)), { created: stsPod('db', 0), dryRun: false, leading: true });
    assert.deepEqual([filter.Error, gate.kind === 'wait' && gate.why, admitted.kind === 'gate' && admitted.why], [NOT_SYNCED, NOT_SYNCED, NOT_SYNCED]);
    assert.equal(app.service.views.reservationCount(), 0);
  });
});
