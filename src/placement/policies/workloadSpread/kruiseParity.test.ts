import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION } from '../../../cluster/annotations.js';
import { slimPod } from '../../../cluster/convert.js';
import { admissionRoutes } from '../../../server/extenderRoutes.js';
import { deployment, nodes, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../../../../test/support/builders.js';
import { silent, testApp } from '../../../../test/support/app.js';
import { filterFor, passedZones } from '../../../../test/support/placement.js';

// OpenKruise's WorkloadSpread behaviours that its own e2e scenarios define (issue 47, behaviours 3–7).

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const web = (subsets: Raw[]) => workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, subsets);

describe('WorkloadSpread: pods beyond every subset (Kruise: "only one subset, zone-a=2", 6 running, 2 matched)', () => {
  const full = () => storeOf([...nodes(ZONES, 1), ...deployment('web', 6), web([zoneSubset('a', 'zone-a', 2)]),
    rsPod('web', 'p0', { nodeName: 'node-a-1' }), rsPod('web', 'p1', { nodeName: 'node-a-1' })]);

  it('admits a pod no subset can take without a subset: every node passes, no seat is reserved, the reason says so', () => {
    // spreadNodes off: it would pass only the nodes holding the fewest pods of the workload.
    const v = filterFor(full(), rsPod('web', 'p2'), { settings: { spreadNodes: false } });
    assert.deepEqual(passedZones(full(), v), ZONES);
    assert.equal(v.subset, undefined);
    assert.equal(v.effects.reserve?.subset, undefined);
    assert.match(v.summary, /no subset \(every subset is full or unschedulable: a 2\/2\); admitted without one/);
  });

  it('podsBeyondSubsets: wait keeps zonekeeper\'s strict mode: the pod waits, naming the subsets and their limits', () => {
    const v = filterFor(full(), rsPod('web', 'p2'), { settings: { podsBeyondSubsets: 'wait' } });
    assert.equal(v.passed.length, 0);
    assert.match(v.summary, /every subset is full or unschedulable: a 2\/2/);
  });

  it('a StatefulSet ordinal beyond every subset\'s range is admitted without a subset too (Kruise matches none)', () => {
    const store = storeOf([...nodes(ZONES, 1), statefulSet('db', 4), workloadSpread('db-ws', { kind: 'StatefulSet', name: 'db' }, [zoneSubset('a', 'zone-a', 2)])]);
    assert.deepEqual(passedZones(store, filterFor(store, stsPod('db', 1))), ['zone-a']);
    assert.deepEqual(passedZones(store, filterFor(store, stsPod('db', 3))), ZONES);
    assert.equal(filterFor(store, stsPod('db', 3), { settings: { podsBeyondSubsets: 'wait' } }).passed.length, 0);
  });

  it('admission and the gate admit it unchanged: no subset annotation, no terms, no gate', async () => {
    for (const podsBeyondSubsets of ['admit', 'wait'] as const) {
      const app = testApp(full(), { config: { workloadSpread: { writeStatus: true, podsBeyondSubsets } } });
      const raw = rsPod('web', 'p2');
      const gate = await app.extender.decideGate(slimPod(rsPod('web', 'gated')));
      const routes = admissionRoutes({ decide: app.extender.decideAdmission, leading: () => true, gateEnabled: true, applySubsetPatches: true, log: silent },
        app.metrics, silent, 1 << 20);
      const body = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
        request: { uid: 'r1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'default', object: { ...raw, metadata: { ...raw.metadata, uid: undefined } } } };
      const res = await routes.request('/admission/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const review = await res.json() as Raw;
      const ops = review.response.patch ? JSON.parse(Buffer.from(review.response.patch, 'base64').toString()) as Raw[] : [];
      if (podsBeyondSubsets === 'admit') {
        assert.equal(gate.kind, 'as-is');
        assert.equal(review.response.allowed, true);
        assert.equal(JSON.stringify(ops).includes(ANNOTATION.kruiseMatched.replace('/', '~1')), false, 'no subset annotation');
        assert.equal(ops.some((op) => String(op.path).startsWith('/spec/affinity') || String(op.path).startsWith('/spec/schedulingGates')), false);
      } else {
        assert.equal(gate.kind, 'wait');
        assert.deepEqual(ops.map((op) => op.path), ['/spec/schedulingGates'], 'strict mode: gated for the keeper');
      }
    }
  });
});
