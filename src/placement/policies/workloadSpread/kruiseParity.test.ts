import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION } from '../../../cluster/annotations.js';
import { slimPod } from '../../../cluster/convert.js';
import { admissionRoutes } from '../../../admission/admissionRoutes.js';
import { addObject } from '../../../cluster/source.js';
import { deletionCosts } from '../../downscale.js';
import { workloadModel } from '../../model.js';
import { deployment, nodes, pod, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../../../../test/support/builders.js';
import { silent, testApp } from '../../../../test/support/app.js';
import { defaultSettings, filterFor, passedZones, pickPods } from '../../../../test/support/placement.js';
import { adoptedMetadata, adoptions } from './adoption.js';
import { nodeSubset, subsetOfPod, type SpreadModel } from './subsets.js';
import { trustedCaller } from '../../../http/callers.js';

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
      const gate = await app.service.spec.ungate(slimPod(rsPod('web', 'gated')));
      const routes = admissionRoutes({ service: app.service, leading: () => true, gateEnabled: true, caller: trustedCaller, log: silent },
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

const ref = { kind: 'Deployment', namespace: 'default', name: 'web' } as const;
const costsOf = (store: ReturnType<typeof storeOf>) => deletionCosts(workloadModel(ref, store.workload('Deployment', 'default', 'web'), store, defaultSettings()), store);
const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });

describe('WorkloadSpread: preferred-only subsets (Kruise: "manage existing pods by only preferredNodeSelector, then deletion subset-b")', () => {
  const toleration = [{ key: 'node-taint', operator: 'Exists', effect: 'NoSchedule' }];
  const subsetA = { name: 'subset-a', maxReplicas: 3, tolerations: toleration,
    preferredNodeSelectorTerms: [{ weight: 20, preference: zoneTerm('zone-a') }, { weight: 10, preference: zoneTerm('zone-b') }] };
  const subsetB = { name: 'subset-b', tolerations: toleration,
    preferredNodeSelectorTerms: [{ weight: 10, preference: zoneTerm('zone-a') }, { weight: 20, preference: zoneTerm('zone-b') }] };
  const onB = (annotations?: Record<string, string>) => ['x', 'y', 'z'].map((s, i) => rsPod('web', s, { nodeName: `node-b-${1 + (i % 2)}`, annotations }));

  it('a pod created before the WorkloadSpread is filed under the subset whose preferred terms weigh most on its node, not the first', () => {
    const store = storeOf([...nodes(['zone-a'], 1), ...nodes(['zone-b'], 2), ...deployment('web', 3), ...onB(), web([subsetA, subsetB])]);
    const model = workloadModel(ref, store.workload('Deployment', 'default', 'web'), store, defaultSettings()) as SpreadModel;
    assert.deepEqual([...model.pods()].map((p) => subsetOfPod(p, model.ws, store)), ['subset-b', 'subset-b', 'subset-b']);
    assert.deepEqual([...costsOf(store).values()], [100, 100, 100]);
  });

  it('once subset-b is deleted from the spec, its adopted pods are in no subset: −200 (Kruise), not re-filed under subset-a', () => {
    const matched = { [ANNOTATION.kruiseMatched]: '{"name":"web-ws","subset":"subset-b"}' };
    const store = storeOf([...nodes(['zone-a'], 1), ...nodes(['zone-b'], 2), ...deployment('web', 3), ...onB(matched), web([subsetA])]);
    assert.deepEqual([...costsOf(store).values()], [-200, -200, -200]);
  });

  it('ties on the preferred weight go to a subset with room, then to the first (Kruise\'s quota score)', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3), web([zoneSubset('a', 'zone-a', 1), zoneSubset('b', 'zone-a')])]);
    const model = workloadModel(ref, store.workload('Deployment', 'default', 'web'), store, defaultSettings()) as SpreadModel;
    const p = slimPod(rsPod('web', 'q', { nodeName: 'node-a-1' }));
    const node = store.node('node-a-1')!;
    assert.equal(nodeSubset(p, node, model.ws)?.name, 'a');
    assert.equal(nodeSubset(p, node, model.ws, (s) => s !== 'a')?.name, 'b');
  });
});

describe('WorkloadSpread: revisions (Kruise: "elastic deploy for deployment, zone-a=2, zone-b=nil", image changed → 2/4, scaled to 2 → 2/0)', () => {
  const rs = (name: string, revision: number, replicas: number): Raw => ({
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: { name, namespace: 'default', uid: `rs-${name}`, annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-web', controller: true }] },
    spec: { replicas },
  });
  const of = (set: string, suffix: string, nodeName?: string) => pod(`${set}-${suffix}`, { kind: 'ReplicaSet', name: set }, { nodeName, ready: true });
  const dep = (replicas: number): Raw => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'deploy-web' }, spec: { replicas } });
  const spread = web([zoneSubset('zone-a', 'zone-a', 2), zoneSubset('zone-b', 'zone-b')]);
  const oldPods = [of('web-v1', 'a1', 'node-a-1'), of('web-v1', 'a2', 'node-a-1'), ...['b1', 'b2', 'b3', 'b4'].map((s) => of('web-v1', s, 'node-b-1'))];

  it('a rollout\'s first new pods go to the capped subset (counted per revision), and the old revision\'s pods there cost least', () => {
    const store = storeOf([...nodes(ZONES, 1), dep(6), rs('web-v1', 1, 6), rs('web-v2', 2, 2), spread, ...oldPods]);
    assert.deepEqual(passedZones(store, filterFor(store, of('web-v2', 'n1'))), ['zone-a']);
    addObject(store, of('web-v2', 'n1', 'node-a-1'));
    addObject(store, of('web-v2', 'n2', 'node-a-1'));
    assert.deepEqual(passedZones(store, filterFor(store, of('web-v2', 'n3'))), ['zone-b']);
    const costs = costsOf(store);
    // Old revision, subsets counted from the last: zone-a 100, zone-b 200; the new one: zone-a 200.
    assert.deepEqual(['web-v1-a1', 'web-v1-a2', 'web-v1-b1', 'web-v2-n1'].map((p) => costs.get(p)), [100, 100, 200, 200]);
    // The picker (and so the ReplicaSet controller, by the costs) removes the old revision's zone-a pods first.
    const picked = pickPods('default', 2, ['web-v1-a1', 'web-v1-a2', 'web-v1-b1', 'web-v1-b2'], store, defaultSettings());
    assert.deepEqual(picked.chosen_pods.sort(), ['web-v1-a1', 'web-v1-a2']);
  });

  it('after the rollout (2/4 of the new revision) and a scale to 2, the capped subset keeps its pods: 200 against 100', () => {
    const newPods = [of('web-v2', 'a1', 'node-a-1'), of('web-v2', 'a2', 'node-a-1'), ...['b1', 'b2', 'b3', 'b4'].map((s) => of('web-v2', s, 'node-b-1'))];
    const store = storeOf([...nodes(ZONES, 1), dep(2), rs('web-v1', 1, 0), rs('web-v2', 2, 2), spread, ...newPods]);
    const costs = costsOf(store);
    assert.deepEqual(newPods.map((p) => costs.get(p.metadata.name)), [200, 200, 100, 100, 100, 100]);
    const picked = pickPods('default', 4, newPods.map((p) => p.metadata.name), store, defaultSettings());
    assert.deepEqual(picked.chosen_pods.sort(), ['web-v2-b1', 'web-v2-b2', 'web-v2-b3', 'web-v2-b4']);
  });
});

describe('WorkloadSpread adoption: which pods get Kruise\'s mark, and which subset (Kruise: "manage the pods that were created before workloadspread")', () => {
  const created = (s: string, i: number, o: Raw = {}) => {
    const p = rsPod('web', s, { nodeName: 'node-a-1', ...o });
    p.metadata.creationTimestamp = `2026-11-21T07:00:0${i}Z`;
    return p;
  };
  const modelOf = (store: ReturnType<typeof storeOf>) => workloadModel(ref, store.workload('Deployment', 'default', 'web'), store, defaultSettings()) as SpreadModel;

  it('files unmarked and stale-marked running pods by node, oldest first, a tie going to the subset with room; marked and pending pods are left alone', () => {
    // Two subsets over the same zone: the quota decides, as Kruise's quota score does.
    const stale = { annotations: { [ANNOTATION.kruiseMatched]: '{"name":"fakeWS","subset":"subset-a"}' } };
    const mine = { annotations: { [ANNOTATION.kruiseMatched]: '{"name":"web-ws","subset":"gone"}' } };
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 5), web([zoneSubset('first', 'zone-a', 2), zoneSubset('second', 'zone-a')]),
      created('p0', 0), created('p1', 1, stale), created('p2', 2), created('p3', 3, mine), rsPod('web', 'pending')]);
    const got = adoptions(modelOf(store), store).map((a) => [a.pod.name, a.subset, a.value]);
    assert.deepEqual(got, [
      ['web-rs-p0', 'first', '{"name":"web-ws","subset":"first"}'],
      ['web-rs-p1', 'first', '{"name":"web-ws","subset":"first"}'],
      ['web-rs-p2', 'second', '{"name":"web-ws","subset":"second"}'],
    ]);
  });

  it('the adopted pod gets its subset\'s patch labels and annotations, unless the WorkloadSpread opts out as Kruise lets it', () => {
    const spread = web([zoneSubset('a', 'zone-a', 2, { patch: { metadata: { labels: { l: '1' }, annotations: { subset: 'a' } }, spec: { priorityClassName: 'x' } } })]);
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 1), spread]);
    assert.deepEqual(adoptedMetadata(modelOf(store).ws, 'a'), { labels: { l: '1' }, annotations: { subset: 'a' } });
    const optOut = { ...spread, metadata: { ...spread.metadata, annotations: { 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata': 'true' } } };
    const store2 = storeOf([...nodes(ZONES, 1), ...deployment('web', 1), optOut]);
    assert.deepEqual(adoptedMetadata(modelOf(store2).ws, 'a'), {});
  });
});
