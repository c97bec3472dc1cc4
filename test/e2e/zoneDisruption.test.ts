// End-to-end: the zone disruption budget (docs/design.md#zone-at-a-time). kube-apiserver calls
// zonekeeper's validating webhook for every pods/eviction in a labelled namespace; kubectl drain
// retries its refusals (429) as it retries a PodDisruptionBudget's. A kubelet stand-in makes bound
// pods Ready a few seconds after they bind, as a container that takes that long to start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { admissionConfig, managedWith, EVICTION_WEBHOOK, EVICTIONS_LABEL, evictionWebhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { podUp, sampleDownZones as sampled } from './disruptions.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { deployment, SCHEDULER, statefulSet, tearDown, threeZoneCluster, ZONES } from './workloads.js';

/** How long a pod takes from bound to Ready (the stand-in kubelet): a restart's length. */
const READY_AFTER_MS = 4000;
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
const ready = podUp;

for (const k of kubeVersions()) describe(`[${k.version}] the zone disruption budget: evictions a zone at a time`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const stops: (() => Promise<void>)[] = [];

  let rbac: Obj[];
  let config: Obj;
  before(async () => {
    const { port, admission } = await admissionConfig('zonekeeper-system/zonekeeper-webhook-tls');
    admission.certificate.evictionWebhookConfiguration = EVICTION_WEBHOOK;
    config = { admission, disruption: { approvalSeconds: 30 } };
    ({ kube, zones } = await threeZoneCluster(cp, config));
    // zonekeeper as the managed overlay with the component grants it, and no more.
    const built = managedWith(cp, 'zone-disruption').objects;
    assert.ok(built.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0].args.includes(`--admission-eviction-webhook=${EVICTION_WEBHOOK}`));
    rbac = built.filter((o) => RBAC_KINDS.has(o.kind));
    await cp.restartZonekeeperAs(rbac, config);
    await kube.create(evictionWebhookConfiguration(port));
    await eventually('zonekeeper wrote the eviction webhook\'s caBundle', async () =>
      !!(await kube.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, EVICTION_WEBHOOK)).webhooks[0].clientConfig.caBundle, 60_000);
  });
  after(async () => {
    for (const stop of stops) await stop();
    await tearDown(cp);
  });

  /** A pinned StatefulSet of 6 behind its own PDB (maxUnavailable 2), opted in with `budget`; all Ready on their pins. */
  const pinned = async (namespace: string, budget: string) => {
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [EVICTIONS_LABEL]: 'enabled' } } });
    stops.push(kube.kubelet(namespace, 300, READY_AFTER_MS));
    await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace }, spec: { maxUnavailable: 2, selector: { matchLabels: { app: 'web' } } } });
    const sts = statefulSet(namespace, 'web', 6, { schedulerName: SCHEDULER });
    sts.metadata.annotations = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': budget };
    await kube.create(sts);
    await eventually('6 pods Ready on their pins', async () => {
      const pods = await kube.podsOf(namespace, 'app=web');
      return pods.length === 6 && pods.every((p) => ready(p) && zones.get(p.spec.nodeName) === ZONES[Number(p.metadata.name.split('-').pop()) % 3]);
    }, 120_000);
    // The disruption controller has seen them Ready: a refusal after this is the zone budget's, never a PDB still counting.
    await eventually('the PDB allows 2', async () => (await kube.get('policy/v1', 'PodDisruptionBudget', namespace, 'web')).status?.disruptionsAllowed === 2, 60_000);
  };

  const sampleDownZones = (namespace: string, done: Promise<unknown>) => sampled(kube, namespace, 'web', 6, ZONES, done);

  /** kubectl drain of `nodes`, as an operator runs it; resolves with its exit code, output and how long it took. */
  const drain = (nodes: string[]) => new Promise<{ code: number | null; out: string; seconds: number }>((resolve) => {
    const started = Date.now();
    const child = spawn('kubectl', ['--kubeconfig', cp.kubeconfig, 'drain', ...nodes, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=300s'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out, seconds: (Date.now() - started) / 1000 }));
  });
  const uncordonAll = async () => {
    for (const n of zones.keys()) await kube.patch('v1', 'Node', undefined, n, { spec: { unschedulable: null } });
  };
  const nodeOf = async (namespace: string, pod: string) => (await kube.get('v1', 'Pod', namespace, pod)).spec.nodeName as string;
  const metric = async (outcome: string) => {
    const line = (await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text()).split('\n').find((l) => l.startsWith(`zonekeeper_evictions_total{asker="api",outcome="${outcome}"}`));
    return Number(line?.split(' ').pop() ?? 0);
  };

  it('two drains in two zones started together: never two zones down, both finish; the refusal is a 429 naming the zone and what it waits for', async () => {
    await pinned('zd1', 'zone');
    const a = await nodeOf('zd1', 'web-0');
    const b = await nodeOf('zd1', 'web-1');
    const refusedBefore = await metric('refused');
    const both = Promise.all([drain([a]), drain([b])]);
    const samples = await sampleDownZones('zd1', both);
    const [da, db] = await both;
    assert.equal(da.code, 0, da.out);
    assert.equal(db.code, 0, db.out);
    const twoDown = samples.filter((s) => s.length > 1);
    console.log(`# [${k.version}] drains of ${a} (zone-a) and ${b} (zone-b) together: ${da.seconds.toFixed(0)} s and ${db.seconds.toFixed(0)} s; ${samples.length} samples, ${twoDown.length} with two zones down`);
    assert.deepEqual(twoDown, [], 'no moment with pods of two zones unavailable');
    assert.ok(await metric('refused') > refusedBefore, 'the second zone waited for the first');
    // What kubectl drain printed for the refusal: the webhook's 429, its message naming the zone under disruption.
    const refusal = [da.out, db.out].join('\n').split('\n').find((l) => l.includes('zone disruption budget'));
    assert.ok(refusal, `a drain printed the refusal:\n${da.out}\n${db.out}`);
    console.log(`# [${k.version}] kubectl drain printed: ${refusal.trim()}`);
    assert.match(refusal, /(will retry after 5s)|Too Many Requests|TooManyRequests/);
    assert.match(refusal, /StatefulSet zd1\/web: zone-[ab] is under disruption; pod web-\d of zone-[ab] may go once every seat outside it is available: waits for/);
    await uncordonAll();
  });

  it('the nodes of zone-a drained at once: a whole-zone budget takes its pods together, a budget of 1 one restart at a time', async () => {
    const zoneA = [...zones].filter(([, z]) => z === 'zone-a').map(([n]) => n);
    // A node the upgrade has already added, where zone-a's pods come back: cordoned while they are first placed.
    await kube.addNode('spare-a-1', 'zone-a');
    zones = await kube.nodeZones();
    const spare = (on: boolean) => kube.patch('v1', 'Node', undefined, 'spare-a-1', { spec: { unschedulable: on || null } });
    await spare(true);
    await pinned('zd2', 'zone');
    await spare(false);
    const refused0 = await metric('refused');
    const whole = await drain(zoneA);
    assert.equal(whole.code, 0, whole.out);
    const refused1 = await metric('refused');
    await uncordonAll();
    await spare(true);
    await pinned('zd3', '1');
    await spare(false);
    const refused2 = await metric('refused');
    const one = await drain(zoneA);
    assert.equal(one.code, 0, one.out);
    const refused3 = await metric('refused');
    console.log(`# [${k.version}] zone-a's two nodes drained (pods Ready ${READY_AFTER_MS / 1000} s after binding): ${whole.seconds.toFixed(1)} s and ${refused1 - refused0} refusals under a whole-zone budget, ${one.seconds.toFixed(1)} s and ${refused3 - refused2} under a budget of 1`);
    // Counted, not timed: the second pod of zone-a waits for the first's replacement only under a budget of 1.
    assert.equal(refused1 - refused0, 0, 'a whole-zone budget takes zone-a\'s pods without a refusal');
    assert.ok(refused3 > refused2, 'a budget of 1: the second pod of zone-a waited for the first\'s replacement');
    assert.match(one.out, /zone disruption budget of StatefulSet zd3\/web/);
    await uncordonAll();
  });

  it('a dry-run eviction is judged and recorded nowhere; pods of a workload without the annotation are not covered', async () => {
    await eventually('zd3 back to 6 Ready pods', async () => (await kube.podsOf('zd3', 'app=web')).filter(ready).length === 6, 120_000);
    const before = (await kube.get('apps/v1', 'StatefulSet', 'zd3', 'web')).metadata.annotations['zonekeeper.io/disruption-approvals'];
    const res = await cp.api.request('POST', '/api/v1/namespaces/zd3/pods/web-0/eviction?dryRun=All', {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0', namespace: 'zd3' } }), contentType: 'application/json', timeoutMs: 10_000,
    });
    assert.equal(res.status, 201, res.body);
    assert.equal((await kube.get('apps/v1', 'StatefulSet', 'zd3', 'web')).metadata.annotations['zonekeeper.io/disruption-approvals'], before);
    assert.ok((await kube.get('v1', 'Pod', 'zd3', 'web-0')).metadata.deletionTimestamp === undefined);
    const notCoveredBefore = await metric('not-covered');
    await kube.create(statefulSet('zd3', 'plain', 1, { schedulerName: SCHEDULER }));
    await eventually('plain-0 bound', async () => (await kube.get('v1', 'Pod', 'zd3', 'plain-0').catch(() => undefined))?.spec.nodeName);
    const plain = await cp.api.request('POST', '/api/v1/namespaces/zd3/pods/plain-0/eviction', {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'plain-0', namespace: 'zd3' } }), contentType: 'application/json', timeoutMs: 10_000,
    });
    assert.equal(plain.status, 201, plain.body);
    assert.equal(await metric('not-covered'), notCoveredBefore + 1);
  });

  it('the Lease holder killed mid-drain: the record on the workload carries over, never two zones down, each drained pod evicted once', async () => {
    await pinned('zd4', 'zone');
    const before = new Map((await kube.podsOf('zd4', 'app=web')).map((p) => [p.metadata.name as string, { uid: p.metadata.uid as string, node: p.spec.nodeName as string }]));
    const drained = [before.get('web-0')!.node, before.get('web-1')!.node];
    let reruns = 0;
    /** kubectl drain again after an error (the webhook unreachable while zonekeeper restarts fails a drain), as an operator would. */
    const drainUntilDone = async (node: string) => {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const r = await drain([node]);
        if (r.code === 0) return r;
        if (reruns === 0) console.log(`# [${k.version}] kubectl drain while zonekeeper restarted: ${r.out.split('\n').find((l) => /failed calling webhook/.test(l))?.trim().slice(0, 400)}`);
        reruns++;
        if (Date.now() > deadline) throw new Error(`kubectl drain ${node} still failing after 180 s:\n${r.out}`);
        await new Promise((res) => setTimeout(res, 2000));
      }
    };
    const both = Promise.all(drained.map(drainUntilDone));
    both.catch(() => {});
    const samples = sampleDownZones('zd4', both);
    await eventually('an approval recorded', async () =>
      (await kube.get('apps/v1', 'StatefulSet', 'zd4', 'web')).metadata.annotations?.['zonekeeper.io/disruption-approvals']?.includes('"pod"'), 60_000, 100);
    await cp.zonekeeper!.stop('SIGKILL');
    await cp.restartZonekeeperAs(rbac, config);
    await both;
    const twoDown = (await samples).filter((x) => x.length > 1);
    const after = await kube.podsOf('zd4', 'app=web');
    const replaced = after.filter((p) => before.get(p.metadata.name)!.uid !== p.metadata.uid).map((p) => p.metadata.name).sort();
    console.log(`# [${k.version}] holder SIGKILLed mid-drain: ${reruns} drain rerun(s) after the webhook was unreachable; replaced ${replaced.join(', ')}; ${twoDown.length} samples with two zones down`);
    assert.deepEqual(twoDown, []);
    assert.deepEqual(replaced, [...before].filter(([, v]) => drained.includes(v.node)).map(([n]) => n).sort(), 'exactly the pods of the drained nodes, once each');
    await uncordonAll();
  });

  // No stand-in kubelet here: web-0 (zone-a) and web-1 (zone-b) never become Ready, a crash-looping revision's pods.
  it('pods already down in two zones: web-0 waits by default, the refusal naming the annotation; under AlwaysAllow it goes, and a Ready pod of zone-a still waits', async () => {
    const ns = 'zd5';
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [EVICTIONS_LABEL]: 'enabled' } } });
    const sts = statefulSet(ns, 'web', 6, { schedulerName: SCHEDULER });
    sts.metadata.annotations = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': 'zone' };
    await kube.create(sts);
    await eventually('6 pods bound', async () => (await kube.podsOf(ns, 'app=web')).filter((p) => p.spec.nodeName).length === 6, 120_000);
    for (const i of [2, 3, 4, 5]) await kube.markReady(ns, `web-${i}`);
    // Probes of web-3 are dry runs: judged by the webhook, never carried out (a pod not cached yet would pass).
    const evict = (pod: string, dryRun = false) => cp.api.request('POST', `/api/v1/namespaces/${ns}/pods/${pod}/eviction${dryRun ? '?dryRun=All' : ''}`, {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } }), contentType: 'application/json', timeoutMs: 10_000,
    });
    // Until zonekeeper's cache has the four Ready: web-3's refusal then names zone-b's web-1 alone.
    await eventually('web-3 refused for web-1 alone', async () => /waits for pod web-1 is not Ready \(zone-b\)"/.test((await evict('web-3', true)).body), 60_000, 250);
    const refused = await evict('web-0');
    assert.equal(refused.status, 429, refused.body);
    assert.match(refused.body, /web-0 is down already: with zonekeeper\.io\/unhealthy-pod-eviction-policy: AlwaysAllow it would go now/);
    await kube.patch('apps/v1', 'StatefulSet', ns, 'web', { metadata: { annotations: { 'zonekeeper.io/unhealthy-pod-eviction-policy': 'AlwaysAllow' } } });
    const uid = (await kube.get('v1', 'Pod', ns, 'web-0')).metadata.uid;
    const allowed = await eventually('web-0 evicted under AlwaysAllow', async () => { const r = await evict('web-0'); return r.status === 201 && r; }, 60_000, 250);
    assert.equal(allowed.status, 201);
    // Never started, it is deleted at once (and made again by its controller): gone, replaced or terminating.
    const now0 = await kube.get('v1', 'Pod', ns, 'web-0').catch(() => undefined);
    assert.ok(!now0 || now0.metadata.uid !== uid || now0.metadata.deletionTimestamp, 'web-0 was evicted');
    const up = await evict('web-3', true);
    assert.equal(up.status, 429, 'a Ready pod of zone-a still waits for zone-b');
    assert.doesNotMatch(up.body, /AlwaysAllow/);
    // Its pods never become Ready: gone, so that no later drain meets them.
    await kube.delete('apps/v1', 'StatefulSet', ns, 'web');
    await eventually(`${ns} has no pods`, async () => (await kube.reapTerminating(ns), (await kube.podsOf(ns, 'app=web')).length === 0), 60_000, 500);
  });
  // Issue 65, points 2 and 4: a Deployment with the budget alone (no zone preferences: no placement policy covers it).
  it('a Deployment no policy places is judged on its pods\' zones; a retry after its PDB refused is judged again', async () => {
    const ns = 'zd6';
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [EVICTIONS_LABEL]: 'enabled' } } });
    const held = new Set<string>();
    stops.push(kube.kubelet(ns, 300, 0, (p) => !held.has(p.metadata.name)));
    const api = deployment(ns, 'api', 3);
    api.metadata.annotations = { 'zonekeeper.io/zone-disruption-budget': 'zone' };
    api.spec.template.spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'api' } } }];
    await kube.create(api);
    await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'api', namespace: ns }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'api' } } } });
    const inZone = new Map<string, string>();
    await eventually('3 pods Ready, one per zone', async () => {
      const pods = (await kube.podsOf(ns, 'app=api')).filter(ready);
      inZone.clear();
      for (const p of pods) inZone.set(zones.get(p.spec.nodeName)!, p.metadata.name);
      return pods.length === 3 && inZone.size === 3;
    }, 120_000);
    const [a, b, c] = ZONES.map((z) => inZone.get(z)!);
    const evict = (pod: string, dryRun = false) => cp.api.request('POST', `/api/v1/namespaces/${ns}/pods/${pod}/eviction${dryRun ? '?dryRun=All' : ''}`, {
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: ns } }), contentType: 'application/json', timeoutMs: 10_000,
    });
    // The PDB (maxUnavailable 0) refuses what zonekeeper approved: the approval stays on the Deployment.
    await eventually('the PDB has counted the pods', async () => (await kube.get('policy/v1', 'PodDisruptionBudget', ns, 'api')).status?.expectedPods === 3, 60_000);
    const pdbRefused = await evict(a!);
    assert.equal(pdbRefused.status, 429, pdbRefused.body);
    assert.match(pdbRefused.body, /disruption budget/);
    const approval = JSON.parse((await kube.get('apps/v1', 'Deployment', ns, 'api')).metadata.annotations['zonekeeper.io/disruption-approvals']);
    assert.deepEqual(approval.map((x: Obj) => [x.pod, x.zone]), [[a, 'zone-a']], 'judged and approved though no policy places it');
    // Zone-b's pod goes down (its readiness fails).
    held.add(b!);
    const notReady = (p: string) => kube.patch('v1', 'Pod', ns, p, { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }] } }, '/status');
    await notReady(b!);
    await eventually('zonekeeper sees zone-b down (zone-c\'s pod refused for it)', async () => (await evict(c!, true)).body.includes(`pod ${b} is not Ready (zone-b)`), 30_000, 200);
    // The PDB is relaxed; the drain retries zone-a's pod while its approval is still in force.
    await kube.patch('policy/v1', 'PodDisruptionBudget', ns, 'api', { spec: { maxUnavailable: 2 } });
    await eventually('the PDB allows one', async () => (await kube.get('policy/v1', 'PodDisruptionBudget', ns, 'api')).status?.disruptionsAllowed >= 1, 30_000, 200);
    const retry = await evict(a!);
    const inForce = Date.now() < Date.parse(approval[0].at) + 30_000;
    console.log(`# [${k.version}] the retry of ${a} (zone-a) ${Math.round((Date.now() - Date.parse(approval[0].at)) / 100) / 10} s after its approval, zone-b down: ${retry.status}`);
    assert.equal(retry.status, 429, `the retry must be judged again: ${retry.body}`);
    assert.match(retry.body, new RegExp(`zone disruption budget of Deployment ${ns}/api: zone-b is under disruption; pod ${a} of zone-a may go once every seat outside it is available: waits for pod ${b} is not Ready \\(zone-b\\)`));
    assert.ok(inForce, 'the retry came while its approval was still in force (else it shows nothing)');
    held.clear();
    await kube.delete('apps/v1', 'Deployment', ns, 'api');
  });
});
