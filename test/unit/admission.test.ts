import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionRoutes } from '../../src/server/extenderRoutes.js';
import { admissionPatch, gatePatch, type GateDecision, type JsonPatchOp } from '../../src/placement/zoneGate.js';
import { deployment, nodes, rsPod, statefulSet, storeOf, stsPod, type Raw } from '../support/builders.js';
import { silent, testApp } from '../support/app.js';

// Admission, the third transport (docs/design.md#admission): the same decision as the gate's,
// written as a JSONPatch into the pod being created.

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const ZONE = 'topology.kubernetes.io/zone';
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));

/** RFC 6902, the subset admissionPatch writes. */
function applyJsonPatch(doc: Raw, ops: readonly JsonPatchOp[]): Raw {
  const out = clone(doc);
  for (const op of ops) {
    const keys = op.path.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let at: any = out;
    for (const k of keys) at = at[k];
    if (op.op === 'remove') delete at[last];
    else if (Array.isArray(at) && last === '-') at.push(op.value);
    else at[last] = op.value;
  }
  return out;
}

/** RFC 7386, as the API server applies the gate's merge patch. */
function applyMergePatch(doc: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = doc && typeof doc === 'object' && !Array.isArray(doc) ? { ...doc } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

describe('admission: the JSONPatch writes what the gate writes', () => {
  const gated = (raw: Raw) => ({ ...raw, spec: { ...raw.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } });
  const term = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }], matchFields: [] };
  const decisions: Exclude<GateDecision, { kind: 'wait' }>[] = [
    { kind: 'zone', topologyKey: ZONE, zone: 'zone-b', why: '', instanceId: 3 },
    { kind: 'subset', workloadSpread: 'ws', subset: 'a', term, preferred: [{ weight: 5, preference: term }], tolerations: [{ key: 'spot', operator: 'Exists', value: '', effect: 'NoSchedule' }], why: '' },
    { kind: 'as-is', why: '' },
  ];
  const pods: [string, Raw][] = [
    ['a bare pod', rsPod('web', 'x')],
    ['a pod with its own selector, affinity, tolerations and annotations', rsPod('web', 'y', {
      nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'a', operator: 'Exists' }], annotations: { team: 'x/y' },
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] }, nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }] } } },
    })],
  ];
  for (const [what, raw] of pods) {
    for (const d of decisions) {
      it(`${d.kind} on ${what}, gated in its template: the same pod either way, the gate gone`, () => {
        const pod = clone(gated(raw));
        const byGate = applyMergePatch(pod, { ...gatePatch(pod, d), metadata: { ...gatePatch(pod, d).metadata, resourceVersion: null } });
        const byAdmission = applyJsonPatch(pod, admissionPatch(pod, d));
        delete byGate.metadata.resourceVersion;
        assert.deepEqual(byAdmission, byGate);
        assert.equal(byAdmission.spec.schedulingGates, undefined);
      });
    }
  }

  it("'gate' adds the zone gate after the template's own, once", () => {
    const pod = rsPod('web', 'x');
    assert.deepEqual(applyJsonPatch(pod, admissionPatch(pod, 'gate')).spec.schedulingGates, [{ name: 'zonekeeper.io/zone' }]);
    const other = { ...pod, spec: { ...pod.spec, schedulingGates: [{ name: 'x/y' }] } };
    assert.deepEqual(applyJsonPatch(other, admissionPatch(other, 'gate')).spec.schedulingGates, [{ name: 'x/y' }, { name: 'zonekeeper.io/zone' }]);
    assert.deepEqual(admissionPatch(gated(pod), 'gate'), []);
  });
});

describe('admission: the webhook route', () => {
  const review = (object: Raw, extra: Raw = {}) => ({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: { uid: 'rev-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'default', object, ...extra },
  });
  const setup = (leading = true) => {
    const preferences = { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' };
    const app = testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3), ...deployment('web', 3, preferences), ...deployment('plain', 1)]));
    const deps = { decide: app.extender.decideAdmission, leading: () => leading, gateEnabled: true, log: silent };
    const routes = admissionRoutes(deps, app.metrics, silent, 1 << 20);
    const post = async (body: unknown) => {
      const res = await routes.request('/admission/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const json = await res.json() as Raw;
      const patch = json.response?.patch ? JSON.parse(Buffer.from(json.response.patch, 'base64').toString()) as JsonPatchOp[] : [];
      return { status: res.status, json, patch };
    };
    return { app, post };
  };
  const creating = (raw: Raw) => ({ ...raw, metadata: { ...raw.metadata, uid: undefined } });

  it("a StatefulSet's ordinal is pinned at creation, and the extender's filter agrees for the same pod", async () => {
    const { app, post } = setup();
    const r = await post(review(creating(stsPod('db', 1))));
    assert.equal(r.status, 200);
    assert.equal(r.json.response.uid, 'rev-1');
    assert.equal(r.json.response.allowed, true);
    assert.equal(r.json.response.patchType, 'JSONPatch');
    const written = applyJsonPatch(stsPod('db', 1), r.patch);
    const zone = written.spec.nodeSelector[ZONE];
    assert.ok(ZONES.includes(zone), `a zone of the cluster: ${zone}`);
    assert.equal(written.spec.schedulingGates, undefined, 'no gate: nothing left for the keeper');
    const filtered = await app.post('/filter', { Pod: stsPod('db', 1), NodeNames: nodes(ZONES, 2).map((n) => n.metadata.name) });
    const passed = (await filtered.json()).NodeNames as string[];
    assert.ok(passed.length > 0 && passed.every((n) => n.startsWith(`node-${zone.slice(5)}`)), `the filter passes only ${zone}'s nodes: ${passed}`);
  });

  it('a pod whose decision reads shared counters (zone preferences) gets the zone gate; so does a pinned one in a replica without the Lease', async () => {
    const { post } = setup();
    const r = await post(review(creating({ ...rsPod('web', 'n'), metadata: { ...rsPod('web', 'n').metadata, name: undefined, generateName: 'web-rs-' } })));
    assert.deepEqual(r.patch, [{ op: 'add', path: '/spec/schedulingGates', value: [{ name: 'zonekeeper.io/zone' }] }]);
    const follower = setup(false);
    assert.deepEqual((await follower.post(review(creating(stsPod('db', 0))))).patch, [{ op: 'add', path: '/spec/schedulingGates', value: [{ name: 'zonekeeper.io/zone' }] }]);
  });

  it('a pod no policy covers is admitted unchanged; a dry run reserves nothing', async () => {
    const { app, post } = setup();
    const r = await post(review(creating(rsPod('plain', 'p'))));
    assert.equal(r.json.response.allowed, true);
    assert.equal(r.json.response.patch, undefined);
    const before = app.extender.state.reservations.size();
    const dry = await post(review(creating(stsPod('db', 2)), { dryRun: true }));
    assert.ok(dry.patch.some((op) => op.path === '/spec/nodeSelector'), 'a dry run answers the same patch');
    assert.equal(app.extender.state.reservations.size(), before, 'and reserves nothing');
    await post(review(creating(stsPod('db', 2))));
    assert.equal(app.extender.state.reservations.size(), before + 1, 'where a real one reserves its node');
  });

  it('bad reviews are 400s that name what is wrong; another kind or operation is refused', async () => {
    const { post } = setup();
    assert.equal((await post('{nope')).status, 400);
    const cm = await post({ ...review({}), request: { ...review({}).request, kind: { group: '', version: 'v1', kind: 'ConfigMap' } } });
    assert.equal(cm.status, 400);
    assert.match(JSON.stringify(cm.json), /reviews pods, not core\/ConfigMap/);
    const update = await post({ ...review({}), request: { ...review({}).request, operation: 'UPDATE' } });
    assert.match(JSON.stringify(update.json), /reviews CREATE, not UPDATE/);
    assert.equal((await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })).status, 400);
  });
});
