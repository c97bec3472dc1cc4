import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { ownerArrival } from '../../src/admission/ownerArrival.js';
import { slimPod } from '../../src/cluster/convert.js';
import { fakeClock } from '../../src/common/clock.js';
import { admissionPatch } from '../../src/admission/patch.js';
import { admissionRoutes } from '../../src/admission/admissionRoutes.js';
import { gatePatch, type SpecDecision } from '../../src/decision/spec.js';
import { subsetPatched, type JsonPatchOp } from '../../src/placement/subsetPatch.js';
import { deployment, nodes, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';
import { silent, testApp } from '../support/app.js';
import { applyMergePatch } from '../support/mergePatch.js';
import { trustedCaller } from '../../src/http/callers.js';

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

describe('admission: the JSONPatch writes what the gate writes', () => {
  const gated = (raw: Raw) => ({ ...raw, spec: { ...raw.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } });
  const term = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }], matchFields: [] };
  const decisions: Exclude<SpecDecision, { kind: 'wait' }>[] = [
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
    const deps = { service: app.service, leading: () => leading, gateEnabled: true, caller: trustedCaller, applySubsetPatches: false, log: silent };
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

  const named = (raw: Raw) => ({ ...raw, metadata: { ...raw.metadata, name: undefined, generateName: 'web-rs-' } });
  const valueAt = (ops: JsonPatchOp[], path: string) => (ops.find((op) => op.path === path) as { value?: unknown } | undefined)?.value;
  const zoneOf = (ops: JsonPatchOp[]) => (valueAt(ops, '/spec/nodeSelector') as Raw | undefined)?.[ZONE];

  it('the holder decides what reads shared counters (zone balance): a generateName pod is named, and each pod counts the ones before it', async () => {
    const { app, post } = setup();
    const answers = [];
    for (const i of [1, 2, 3]) answers.push((await post(review(creating(named(rsPod('web', String(i)))), { uid: `rev-${i}` }))).patch);
    const names = answers.map((ops) => valueAt(ops, '/metadata/name') as string);
    assert.ok(names.every((n) => /^web-rs-[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(n)), `named as the API server names: ${names}`);
    assert.equal(new Set(names).size, 3);
    assert.deepEqual(answers.map(zoneOf).sort(), ZONES, 'one pod per zone: each decision saw the reservations before it');
    assert.equal(app.service.views.reservationCount(), 3);
    // The watch shows the first pod stored (its own UID, the zone in its spec): its spec counts it now, not the reservation.
    const stored = rsPod('web', 'x', { uid: 'real-uid-1', nodeSelector: { [ZONE]: zoneOf(answers[0]!)! } });
    stored.metadata.name = names[0];
    addObject(app.source.store, stored);
    assert.equal(app.service.views.reservationCount(), 2, 'the admitted reservation ends when the stored pod shows');
    // Two admitted pods never stored (a quota refused them, another webhook denied them): their seats last reservationTtlSeconds.
    app.clock.advance(31_000);
    assert.equal(app.service.views.reservationCount(), 0);
  });

  it('a replica without the Lease gates every pod a policy covers, even a pinned ordinal', async () => {
    const follower = setup(false);
    const gate = [{ op: 'add', path: '/spec/schedulingGates', value: [{ name: 'zonekeeper.io/zone' }] }];
    assert.deepEqual((await follower.post(review(creating(stsPod('db', 0))))).patch, gate);
    assert.deepEqual((await follower.post(review(creating(named(rsPod('web', 'n')))))).patch.slice(1), gate);
  });

  it('a pod no policy covers is admitted unchanged; a dry run reserves nothing', async () => {
    const { app, post } = setup();
    const r = await post(review(creating(rsPod('plain', 'p'))));
    assert.equal(r.json.response.allowed, true);
    assert.equal(r.json.response.patch, undefined);
    const before = app.service.views.reservationCount();
    const dry = await post(review(creating(stsPod('db', 2)), { dryRun: true }));
    assert.ok(dry.patch.some((op) => op.path === '/spec/nodeSelector'), 'a dry run answers the same patch');
    assert.equal(app.service.views.reservationCount(), before, 'and reserves nothing');
    await post(review(creating(stsPod('db', 2))));
    assert.equal(app.service.views.reservationCount(), before + 1, 'where a real one reserves its node');
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

describe('admission: a review from a caller not known to be kube-apiserver', () => {
  it('writes nothing: a forged review naming a Deployment with instance IDs gets the zone gate, no ID and no reservation', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 2), ...deployment('web', 3, { 'zonekeeper.io/instance-ids': 'true' })]));
    const deps = { service: app.service, leading: () => true, gateEnabled: true, caller: () => false, log: silent };
    const routes = admissionRoutes(deps, app.metrics, silent, 1 << 20);
    const object = { ...rsPod('web', 'x'), metadata: { ...rsPod('web', 'x').metadata, uid: undefined } };
    const res = await routes.request('/admission/pods', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'forged', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'default', object } }) });
    const patch = JSON.parse(Buffer.from((await res.json() as Raw).response.patch, 'base64').toString());
    assert.deepEqual(patch, [{ op: 'add', path: '/spec/schedulingGates', value: [{ name: 'zonekeeper.io/zone' }] }]);
    assert.equal(app.service.views.reservationCount(), 0);
    assert.equal(app.source.snapshot.workload('Deployment', 'default', 'web')?.annotations['zonekeeper.io/instance-assignment'], undefined);
  });
});

describe("admission: a WorkloadSpread subset's patch (seed 004) and instance IDs, written at creation", () => {
  const patchOf = (arch: string, cpu: string) => ({ metadata: { labels: { 'resource.cpu/arch': arch } }, spec: { containers: [{ name: 'main', resources: { limits: { cpu } } }] } });
  const spread = (x86Patch: Raw = patchOf('x86', '500m')) => workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [
    zoneSubset('x86', 'zone-a', 1, { patch: x86Patch }), zoneSubset('arm', 'zone-b', undefined, { patch: patchOf('arm', '300m') }),
  ]);
  const withContainer = (raw: Raw) => ({ ...raw, metadata: { ...raw.metadata, uid: undefined, labels: { app: 'web' } },
    spec: { ...raw.spec, containers: [{ name: 'main', image: 'app:1', resources: { requests: { cpu: '100m' } } }] } });
  const setup = (o: { standalone?: boolean; ws?: Raw; more?: Raw[] } = {}) => {
    const standalone = o.standalone ?? true;
    const app = testApp(storeOf([...nodes(['zone-a', 'zone-b'], 2), ...deployment('web', 3), o.ws ?? spread(), ...(o.more ?? [])]),
      { config: { workloadSpread: { writeStatus: standalone } } });
    const deps = { service: app.service, leading: () => true, gateEnabled: true, caller: trustedCaller, applySubsetPatches: standalone, log: silent };
    const routes = admissionRoutes(deps,
      app.metrics, silent, 1 << 20);
    let n = 0;
    return async (raw: Raw, extra: Raw = {}) => {
      const body = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: `rev-${++n}`, kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'default', object: raw, ...extra } };
      const res = await routes.request('/admission/pods', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = await res.json() as Raw;
      const ops = json.response?.patch ? JSON.parse(Buffer.from(json.response.patch, 'base64').toString()) as JsonPatchOp[] : [];
      return { response: json.response as Raw, pod: applyJsonPatch(raw, ops) };
    };
  };

  it('standalone: each pod gets its subset, its subset\'s labels and resource limits, and the annotation Kruise uses', async () => {
    const admit = setup();
    const first = await admit(withContainer(rsPod('web', 'a')));
    assert.equal(first.pod.metadata.labels['resource.cpu/arch'], 'x86');
    assert.equal(first.pod.metadata.labels.app, 'web', 'the pod\'s own labels stay');
    assert.deepEqual(first.pod.spec.containers, [{ name: 'main', image: 'app:1', resources: { requests: { cpu: '100m' }, limits: { cpu: '500m' } } }]);
    assert.deepEqual(JSON.parse(first.pod.metadata.annotations['apps.kruise.io/matched-workloadspread']), { name: 'ws', subset: 'x86' });
    assert.deepEqual(first.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values, ['zone-a']);
    // Subset x86 holds one (maxReplicas 1, the first's reservation): the next goes to arm.
    const second = await admit(withContainer(rsPod('web', 'b')));
    assert.equal(second.pod.metadata.labels['resource.cpu/arch'], 'arm');
    assert.equal(second.pod.spec.containers[0].resources.limits.cpu, '300m');
  });

  it('with OpenKruise (its webhook owns patches) the subset is written but no patch is applied: never twice', async () => {
    const admit = setup({ standalone: false });
    const { pod } = await admit(withContainer(rsPod('web', 'a')));
    assert.deepEqual(JSON.parse(pod.metadata.annotations['apps.kruise.io/matched-workloadspread']), { name: 'ws', subset: 'x86' });
    assert.equal(pod.metadata.labels['resource.cpu/arch'], undefined);
    assert.equal(pod.spec.containers[0].resources.limits, undefined);
  });

  it('a patch that cannot be applied (a container the pod lacks, metadata.name) refuses the pod, naming the WorkloadSpread and the subset', async () => {
    for (const bad of [{ spec: { containers: [{ name: 'sidecar', resources: { limits: { cpu: '1' } } }] } }, { metadata: { name: 'x' } }]) {
      const admit = setup({ ws: spread(bad) });
      const { response } = await admit(withContainer(rsPod('web', 'a')));
      assert.equal(response.allowed, false);
      assert.match(response.status.message, /WorkloadSpread default\/ws subset x86: its patch cannot be applied: /);
    }
  });

  it('an Adaptive WorkloadSpread: standalone, its subset and patch are written at creation (its status controller reschedules); with OpenKruise, the keeper watches it', async () => {
    const adaptive = { ...spread(), spec: { ...spread().spec, scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 5 } } } };
    const { pod } = await setup({ ws: adaptive })(withContainer(rsPod('web', 'a')));
    assert.equal(pod.spec.schedulingGates, undefined);
    assert.deepEqual(JSON.parse(pod.metadata.annotations['apps.kruise.io/matched-workloadspread']), { name: 'ws', subset: 'x86' });
    assert.equal(pod.metadata.labels['resource.cpu/arch'], 'x86', 'its patch applied, as Kruise\'s webhook applies it');
    const kruise = await setup({ ws: adaptive, standalone: false })(withContainer(rsPod('web', 'a')));
    assert.deepEqual(kruise.pod.spec.schedulingGates, [{ name: 'zonekeeper.io/zone' }]);
  });

  it('an instance ID is claimed and written with the zone it pins; a dry run takes none and leaves the pod to the keeper', async () => {
    const more = deployment('ids', 3, { 'zonekeeper.io/instance-ids': 'true', 'zonekeeper.io/zones': 'zone-a,zone-b' });
    const admit = setup({ more });
    const dry = await admit(withContainer(rsPod('ids', 'x')), { dryRun: true });
    assert.deepEqual(dry.pod.spec.schedulingGates, [{ name: 'zonekeeper.io/zone' }]);
    const { pod } = await admit(withContainer(rsPod('ids', 'x')));
    assert.equal(pod.metadata.annotations['zonekeeper.io/instance-id'], '0');
    assert.equal(pod.spec.nodeSelector[ZONE], 'zone-a');
    assert.equal(pod.spec.schedulingGates, undefined);
  });
});

describe('subsetPatched: a strategic merge patch on a pod', () => {
  const pod = { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'main', image: 'i', env: [{ name: 'X', value: '1' }] }, { name: 'side', image: 's' }], tolerations: [{ key: 't' }] } };
  it('merges containers and env by name, replaces other lists, deletes with null and $patch: delete', () => {
    const r = subsetPatched(pod, { metadata: { labels: { b: null, c: '3' } }, spec: { containers: [{ name: 'main', env: [{ name: 'Y', value: '2' }] }, { name: 'side', $patch: 'delete' }], tolerations: [{ key: 'u' }] } });
    assert.equal(r.error, undefined);
    const out = applyJsonPatch(pod, r.error === undefined ? r.ops : []);
    assert.deepEqual(out.metadata.labels, { a: '1', c: '3' });
    assert.deepEqual(out.spec.containers, [{ name: 'main', image: 'i', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] }]);
    assert.deepEqual(out.spec.tolerations, [{ key: 'u' }]);
    assert.deepEqual(out, r.error === undefined ? r.pod : undefined);
  });
  it('refuses what it may not write', () => {
    assert.match(subsetPatched(pod, { status: {} }).error ?? '', /sets status/);
    assert.match(subsetPatched(pod, { spec: { nodeName: 'n' } }).error ?? '', /spec.nodeName/);
    assert.match(subsetPatched(pod, []).error ?? '', /not an object/);
    assert.match(subsetPatched(pod, { spec: { priority: 5 } }).error ?? '', /spec.priority, which the API server computes from spec.priorityClassName/);
    assert.match(subsetPatched(pod, { spec: { overhead: { cpu: '1' } } }).error ?? '', /spec.overhead, which the API server computes/);
    assert.match(subsetPatched(pod, { spec: { ephemeralContainers: [] } }).error ?? '', /spec.ephemeralContainers, which a pod may not have at creation/);
  });
  it('a patch naming a priority class drops the priority the API server computed from the old one (as Kruise does), and its preemption policy', () => {
    const prioritized = { ...pod, spec: { ...pod.spec, priority: 0, preemptionPolicy: 'PreemptLowerPriority' } };
    const r = subsetPatched(prioritized, { spec: { priorityClassName: 'high' } });
    assert.equal(r.error, undefined);
    const out = applyJsonPatch(prioritized, r.error === undefined ? r.ops : []);
    assert.equal(out.spec.priorityClassName, 'high');
    assert.equal('priority' in out.spec, false);
    assert.equal('preemptionPolicy' in out.spec, false);
    // The same class as the pod's: the computed values are right and stay.
    const same = subsetPatched({ ...prioritized, spec: { ...prioritized.spec, priorityClassName: 'high' } }, { spec: { priorityClassName: 'high' } });
    assert.deepEqual(same.error === undefined ? same.ops : undefined, []);
    // A runtime class: its overhead is computed again.
    const withOverhead = { ...pod, spec: { ...pod.spec, overhead: { cpu: '100m' } } };
    const rc = subsetPatched(withOverhead, { spec: { runtimeClassName: 'kata' } });
    assert.equal('overhead' in (rc.error === undefined ? rc.pod.spec : { overhead: 1 }), false);
  });
});

describe("admission waits for a new pod's controller to reach the cache", () => {
  it('a ReplicaSet the watch shows later: decided once it does, without waiting out the time; one never shown: after the time; a cached owner or none: at once', async () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('old', 1), statefulSet('db', 1)]);
    const clock = fakeClock();
    const arrival = ownerArrival(memorySource(store, 'test'), 1_000, clock);
    let arrived = false;
    const waiting = arrival(slimPod(rsPod('web', 'a'))).then(() => { arrived = true; });
    await clock.advance(10);
    assert.equal(arrived, false, 'web-rs is not cached yet');
    addObject(store, deployment('web', 1)[1]!);
    await waiting;
    assert.equal(clock.now(), 10, 'resolved by the watch, not the timer');
    let late = false;
    const never = arrival(slimPod(rsPod('gone', 'a'))).then(() => { late = true; });
    await clock.advance(999);
    assert.equal(late, false);
    await clock.advance(1);
    await never;
    const start = clock.now();
    await arrival(slimPod(rsPod('old', 'a')));
    await arrival(slimPod(stsPod('db', 0)));
    await arrival(slimPod({ ...rsPod('bare', 'a'), metadata: { ...rsPod('bare', 'a').metadata, ownerReferences: undefined } }));
    assert.equal(clock.now() - start, 0, 'a cached owner, or none: no wait');
  });
});
