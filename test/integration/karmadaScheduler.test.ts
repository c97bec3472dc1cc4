import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventRecorder } from '../../src/actuator/events.js';
import { federationWatch, type FederationView } from '../../src/cluster/memberClusters.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { federationService, type FederationService } from '../../src/decision/bindingDecisions.js';
import { bindingScheduler } from '../../src/karmada/bindingScheduler.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { node } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime } from '../support/wait.js';

// The Karmada transport against list/watch servers on 127.0.0.1: one stands in for the Karmada
// control plane, one for the members (each read through the first's cluster proxy). What it writes,
// in what order, conditionally, and what it never writes.

const START = Date.parse('2026-11-29T06:00:00Z');
const NS = 'db';

function binding(name: string, replicas: number, o: { kind?: string; scheduler?: string; clusters?: object[]; placement?: object } = {}) {
  return {
    apiVersion: 'work.karmada.io/v1alpha2', kind: 'ResourceBinding',
    metadata: { name: `${name}-${(o.kind ?? 'Deployment').toLowerCase()}`, namespace: NS, uid: `rb-${name}`, generation: 1,
      annotations: { 'propagationpolicy.karmada.io/name': name, 'propagationpolicy.karmada.io/namespace': NS } },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: o.kind ?? 'Deployment', namespace: NS, name }, replicas, schedulerName: o.scheduler ?? 'zonekeeper',
      placement: { clusterAffinity: { clusterNames: ['m1', 'm2', 'm3'] }, replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' }, ...o.placement }, ...(o.clusters ? { clusters: o.clusters } : {}),
    },
    status: { conditions: [{ type: 'FullyApplied', status: 'False', reason: 'x', message: 'kept' }] },
  };
}

const policy = (name: string, prefs: string) => ({
  apiVersion: 'policy.karmada.io/v1alpha1', kind: 'PropagationPolicy',
  metadata: { name, namespace: NS, annotations: { 'zonekeeper.io/cluster-preferences': prefs } }, spec: {},
});

/** A Karmada stand-in with three members (each one node in three zones) and the transport scheduling its bindings. */
async function karmadaRig(karmadaConfig: object) {
  const clock = fakeClock(START);
  const until = (cond: () => boolean, what: string, limitMs = 60_000) => onFakeTime(clock, cond, what, limitMs);
  const karmada = await new FakeApiServer().start();
  const members = await new FakeApiServer().start();
  for (const z of ['zone-a', 'zone-b', 'zone-c']) {
    members.put({ ...node(`n-${z}`, z), status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '8', memory: '32Gi', pods: '110' } } });
  }
  for (const m of ['m1', 'm2', 'm3']) {
    karmada.proxies.set(m, members);
    karmada.put({
      apiVersion: 'cluster.karmada.io/v1alpha1', kind: 'Cluster', metadata: { name: m },
      spec: { syncMode: 'Push', apiEndpoint: `https://127.0.0.1:${members.port}`, impersonatorSecretRef: { namespace: 'karmada-cluster', name: `${m}-impersonator` } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
  }
  const config = parseConfig({ karmada: karmadaConfig });
  const metrics = createMetrics();
  const api = karmada.client();
  const watch = { pageSize: 500, watchTimeoutSeconds: 300, silenceSeconds: 360, backoffInitialMs: 100, backoffMaxMs: 1000, maxStalenessSeconds: 30, clock };
  const view = federationWatch(api, watch, silent);
  const service = federationService(view, config.karmada, metrics, clock);
  const events = eventRecorder(api, silent, metrics, { clock });
  const scheduler = bindingScheduler({ service, view, api, events, config: config.karmada, log: silent, metrics, clock });
  view.start();
  await until(() => view.ready() && view.members().every((m) => m.healthy), 'the federation and its members watched');
  scheduler.start();
  const stop = async () => {
    await scheduler.stop();
    await view.stop();
    await karmada.stop();
    await members.stop();
  };
  return { clock, until, karmada, metrics, view, service, stop };
}

describe('the Karmada transport: zonekeeper schedules the bindings that name it', () => {
  let karmada: FakeApiServer;
  let view: FederationView;
  let metrics: Metrics;
  let service: FederationService;
  let clock: ReturnType<typeof fakeClock>;
  let until: Awaited<ReturnType<typeof karmadaRig>>['until'];
  let stop: () => Promise<void>;
  const stored = (name: string) => karmada.get('ResourceBinding', NS, name)!;
  const clustersOf = (name: string) =>
    Object.fromEntries(((stored(name).spec.clusters ?? []) as { name: string; replicas: number }[]).map((c) => [c.name, c.replicas]));

  before(async () => {
    ({ karmada, view, metrics, service, clock, until, stop } = await karmadaRig({ overrideSettleSeconds: 2 }));
  });
  after(() => stop());

  it('writes spec.clusters with the applied placement, then Scheduled, keeping the other conditions, and an Event', async () => {
    karmada.put(policy('web', '{"rebalance":true,"clusters":{"*":{"weight":1},"m3":{"weight":1,"maxReplicas":1}}}'));
    karmada.put(binding('web', 7));
    await until(() => stored('web-deployment').status?.conditions?.some((c: { type: string }) => c.type === 'Scheduled'), 'web scheduled');
    assert.deepEqual(clustersOf('web-deployment'), { m1: 3, m2: 3, m3: 1 });
    const b = stored('web-deployment');
    assert.equal(b.metadata.annotations['policy.karmada.io/applied-placement'], JSON.stringify(b.spec.placement));
    const scheduled = b.status.conditions.find((c: { type: string }) => c.type === 'Scheduled');
    assert.equal(scheduled.status, 'True');
    assert.equal(scheduled.reason, 'Success');
    assert.ok(b.status.lastScheduledTime, 'lastScheduledTime');
    assert.equal(b.status.conditions.find((c: { type: string }) => c.type === 'FullyApplied')?.message, 'kept', 'the other conditions are kept');
    const spec = karmada.patches.find((p) => p.path.endsWith('/resourcebindings/web-deployment'))!;
    assert.ok(spec.body.metadata.resourceVersion, 'the spec patch is conditional on the resourceVersion it was planned from');
    await until(() => [...karmada.kubeEvents.values()].some((e) => e.involvedObject.name === 'web-deployment' && e.reason === 'ScheduleBindingSucceed'), 'an Event on the binding');
    await until(() => [...karmada.kubeEvents.values()].some((e) => e.involvedObject.kind === 'Deployment' && e.involvedObject.name === 'web'
      && e.reason === 'ScheduleBindingSucceed' && /^Binding has been scheduled successfully\. Result: \{m1:3, m2:3, m3:1\}$/.test(e.message)), 'the same Event on the resource template');
  });

  it('a scale sends only what changed in the status: the conditions Karmada\'s status controller keeps are never sent back', async () => {
    const before = stored('web-deployment');
    // The fake records a status patch at the object's path, with its status alone.
    const statusPatches = () => karmada.patches.filter((p) => p.path.endsWith('/resourcebindings/web-deployment') && p.body.status);
    const seen = statusPatches().length;
    karmada.put({ ...before, metadata: { ...before.metadata, generation: 2 }, spec: { ...before.spec, replicas: 9 } });
    // Generation 2 is the scale; the spec patch makes generation 3, and the status observes that.
    await until(() => statusPatches().length > seen && stored('web-deployment').status.schedulerObservedGeneration === 3, 'the scale scheduled');
    assert.equal(stored('web-deployment').metadata.generation, 3);
    assert.deepEqual(clustersOf('web-deployment'), { m1: 4, m2: 4, m3: 1 });
    const last = statusPatches().at(-1)!;
    assert.equal(last.body.status.conditions, undefined, 'Scheduled was already True/Success: the conditions are not sent');
    assert.ok(last.body.status.lastScheduledTime);
  });

  it('a status Karmada writes between the spec patch and the status patch does not turn the status away; a new spec does', async () => {
    const writes = async (result: string) => (await metrics.registry.getSingleMetric('zonekeeper_federation_writes_total')!.get()).values
      .find((v) => v.labels.write === 'status' && v.labels.result === result)?.value ?? 0;
    const scaleTo = (replicas: number) => {
      const b = stored('web-deployment');
      karmada.put({ ...b, metadata: { ...b.metadata, generation: b.metadata.generation + 1 }, spec: { ...b.spec, replicas } });
    };
    /** Holds patches until the spec patch has come, lets it through, and holds the status patch that follows. */
    const holdStatus = async () => {
      karmada.holdPatches();
      await until(() => karmada.patchesHeld('/web-deployment') === 1, 'the spec patch');
      karmada.releasePatches();
      karmada.holdPatches();
      await until(() => karmada.patchesHeld('/web-deployment/status') === 1, 'the status patch');
    };
    // Karmada's binding controller writes the status right after each spec patch (here: FullyApplied).
    const [conflicts, ok] = [await writes('conflict'), await writes('ok')];
    scaleTo(10);
    await holdStatus();
    const mid = stored('web-deployment');
    karmada.put({ ...mid, status: { ...mid.status, conditions: mid.status.conditions.map((c: { type: string }) => (c.type === 'FullyApplied' ? { ...c, message: 'applied meanwhile' } : c)) } });
    karmada.releasePatches();
    await until(() => stored('web-deployment').status.schedulerObservedGeneration === stored('web-deployment').metadata.generation, 'the status written');
    assert.equal(await writes('conflict'), conflicts, 'not turned away by the other status');
    assert.equal(await writes('ok'), ok + 1);
    assert.equal(stored('web-deployment').status.conditions.find((c: { type: string }) => c.type === 'FullyApplied').message, 'applied meanwhile', 'and not overwritten');
    // A scale between the two: the status for the older spec is refused, and the binding is planned again from the new one.
    scaleTo(11);
    await holdStatus();
    const planned = stored('web-deployment').metadata.generation;
    scaleTo(12);
    karmada.releasePatches();
    await until(() => stored('web-deployment').status.schedulerObservedGeneration === stored('web-deployment').metadata.generation
      && stored('web-deployment').metadata.generation > planned + 1, 'the newer scale scheduled');
    assert.ok(await writes('conflict') > conflicts, 'the status for the older generation was refused');
    assert.equal(karmada.patches.filter((p) => p.body.status?.schedulerObservedGeneration === planned).length, 0, 'never written for a spec already replaced');
    assert.deepEqual(Object.values(clustersOf('web-deployment')).reduce((a, b) => a + b, 0), 12);
  });

  it('a binding of another scheduler is never written', async () => {
    karmada.put(binding('theirs', 4, { scheduler: 'default-scheduler' }));
    karmada.put(policy('after', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('after', 2));
    await until(() => !!stored('after-deployment').spec.clusters, 'a later binding of ours is scheduled');
    assert.equal(karmada.patches.filter((p) => p.path.includes('theirs-deployment')).length, 0);
  });

  it('a bad preference is refused whole: Scheduled False with the reason, a Warning, no spec.clusters', async () => {
    karmada.put(policy('bad', '{"clusters":{"m1":{"minReplicas":3,"maxReplicas":2}}}'));
    karmada.put(binding('bad', 3));
    // Never planned before its policy is seen: that would read the preferences as absent and write a plan.
    await until(() => stored('bad-deployment').status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Scheduled' && c.status === 'False'), 'bad refused');
    const c = stored('bad-deployment').status.conditions.find((x: { type: string }) => x.type === 'Scheduled');
    assert.equal(c.status, 'False');
    assert.match(c.message, /minReplicas is above maxReplicas/);
    assert.equal(karmada.patches.filter((p) => p.path.endsWith('/bad-deployment') && p.body.spec).length, 0, 'no spec.clusters, not even before the policy was seen');
    const warnings = () => [...karmada.kubeEvents.values()].filter((e) => e.involvedObject.name === 'bad-deployment' && e.type === 'Warning');
    await until(() => warnings().length > 0, 'a Warning');
    // Said once: the resyncs that plan it again write nothing more and record nothing more.
    const statusWrites = () => karmada.patches.filter((p) => p.path.endsWith('/bad-deployment/status')).length;
    const written = statusWrites();
    const from = clock.now();
    await until(() => clock.now() - from > 65_000, 'two resyncs', 90_000);
    assert.equal(statusWrites(), written, 'no status written again');
    assert.deepEqual(warnings().map((e) => e.count ?? 1), [1], 'one Warning, counted once');
  });

  it('a binding whose policy is not seen yet waits, says why where /debug/explain reads, and is planned once the policy comes', async () => {
    karmada.put(binding('late', 3));
    const row = () => service.workloads().find((w) => w.binding === `${NS}/late-deployment`);
    await until(() => row() !== undefined, 'the wait recorded');
    assert.equal(row()!.outcome, 'wait');
    assert.equal(row()!.why, `its PropagationPolicy ${NS}/late not seen yet`);
    assert.equal(karmada.patches.filter((p) => p.path.includes('/late-deployment')).length, 0, 'nothing written while it waits');
    karmada.put(policy('late', '{"clusters":{"*":{"weight":1}}}'));
    await until(() => Object.values(clustersOf('late-deployment')).reduce((a, b) => a + b, 0) === 3, 'planned once the policy is seen');
    assert.notEqual(row()!.outcome, 'wait');
  });

  it('spread constraints are carried out; a field no Karmada release schedules by default is refused whole, the field named and how to proceed', async () => {
    karmada.put(policy('spread', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('spread', 4, { placement: { spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 2 }] } }));
    await until(() => stored('spread-deployment').spec.clusters?.length === 2, 'spread scheduled over two members');
    assert.deepEqual(Object.values(clustersOf('spread-deployment')), [2, 2], 'two members, as maxGroups asks');
    karmada.put(binding('affine', 4, { placement: { workloadAffinity: { affinity: { groupByLabelKey: 'app' } } } }));
    await until(() => stored('affine-deployment').status?.conditions?.some((c: { type: string }) => c.type === 'Scheduled'), 'affine refused');
    const c = stored('affine-deployment').status.conditions.find((x: { type: string }) => x.type === 'Scheduled');
    assert.deepEqual([c.status, c.reason], ['False', 'Unschedulable']);
    assert.match(c.message, /spec\.placement\.workloadAffinity: zonekeeper does not carry this out; .*re-create it with schedulerName default-scheduler/);
    assert.equal(stored('affine-deployment').spec.clusters, undefined, 'no partial plan');
    // m2 labelled env=prod: a selector for it leaves m1 and m3 out.
    const m2 = karmada.get('Cluster', '', 'm2')!;
    karmada.put({ ...m2, metadata: { ...m2.metadata, labels: { env: 'prod' } } });
    karmada.put(policy('prod', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('prod', 3, { placement: { clusterAffinity: { labelSelector: { matchLabels: { env: 'prod' } } } } }));
    await until(() => !!stored('prod-deployment').spec.clusters, 'prod scheduled');
    assert.deepEqual(clustersOf('prod-deployment'), { m2: 3 });
  });

  it('a ResourceBinding naming another namespace\'s resource is refused, the field named: no plan, no OverridePolicy, no Event there', async () => {
    karmada.put(policy('foreign', '{"clusters":{"*":{"weight":1}}}'));
    const forged = binding('foreign', 3, { kind: 'StatefulSet' });
    karmada.put({ ...forged, spec: { ...forged.spec, resource: { ...forged.spec.resource, namespace: 'victim' } } });
    await until(() => stored('foreign-statefulset').status?.conditions?.some((c: { type: string }) => c.type === 'Scheduled'), 'foreign refused');
    const c = stored('foreign-statefulset').status.conditions.find((x: { type: string }) => x.type === 'Scheduled');
    assert.deepEqual([c.status, c.reason], ['False', 'Unschedulable']);
    assert.match(c.message, /^spec\.resource\.namespace "victim" is not the binding's own namespace db; /);
    assert.equal(stored('foreign-statefulset').spec.clusters, undefined, 'never planned');
    await until(() => [...karmada.kubeEvents.values()].some((e) => e.involvedObject.name === 'foreign-statefulset' && e.type === 'Warning'), 'a Warning on the binding');
    assert.deepEqual(karmada.requests.filter((r) => r.includes('/namespaces/victim/')), [], 'nothing written in the resource\'s namespace');
    assert.ok(![...karmada.kubeEvents.values()].some((e) => e.involvedObject.namespace === 'victim'), 'no Event on the named resource');
  });

  it('a StatefulSet: its ordinal ranges are written before any member gets a replica', async () => {
    karmada.put(policy('db', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('db', 5, { kind: 'StatefulSet' }));
    await until(() => !!stored('db-statefulset').spec.clusters, 'db scheduled');
    const created = karmada.creates.find((o) => o.kind === 'OverridePolicy')!;
    assert.equal(created.metadata.labels['zonekeeper.io/ordinals-of'], 'db');
    const starts = Object.fromEntries(created.spec.overrideRules.map((r: any) => [r.targetCluster.clusterNames[0], r.overriders.plaintext[0].value.start]));
    assert.deepEqual(starts, { m1: 0, m2: 1000, m3: 2000 });
    const at = (pred: (r: string) => boolean) => karmada.requests.findIndex(pred);
    assert.ok(at((r) => r.startsWith('POST') && r.includes('/overridepolicies')) < at((r) => r.startsWith('PATCH') && r.endsWith('/resourcebindings/db-statefulset')),
      'the OverridePolicy is created before spec.clusters is written');
    assert.deepEqual(Object.values(clustersOf('db-statefulset')).sort(), [1, 2, 2]);
  });

  it('a write refused as a conflict is planned again from the binding as it is now', async () => {
    karmada.faults.push({ match: (m, p) => m === 'PATCH' && p.endsWith('/resourcebindings/race-deployment'), status: 409, remaining: 1 });
    karmada.put(policy('race', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('race', 6));
    await until(() => !!stored('race-deployment').spec.clusters, 'race scheduled after the conflict');
    assert.deepEqual(clustersOf('race-deployment'), { m1: 2, m2: 2, m3: 2 });
  });

  it('conflicts in a row (another controller writing the binding) are planned again at once, not after a growing backoff', async () => {
    karmada.faults.push({ match: (m, p) => m === 'PATCH' && p.endsWith('/resourcebindings/hot-deployment'), status: 409, remaining: 6 });
    karmada.put(policy('hot', '{"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('hot', 3));
    // Backing off 0.5, 1, 2, 4, 8 and 16 s would take 31.5 s of fake time; 200 ms each takes about 1.2 s.
    await until(() => !!stored('hot-deployment').spec.clusters, 'hot scheduled after six conflicts', 5_000);
    const writes = (await metrics.registry.getSingleMetric('zonekeeper_federation_writes_total')!.get()).values;
    const count = (result: string) => writes.find((v) => v.labels.write === 'clusters' && v.labels.result === result)?.value ?? 0;
    assert.ok(count('conflict') >= 6, `each refused write counted as a conflict (${count('conflict')})`);
    assert.ok(count('ok') >= 1, 'the write that went through counted');
  });

  it('a member zonekeeper cannot read keeps what it has and gets none added', async () => {
    const assigned = [{ name: 'm1', replicas: 1 }, { name: 'm2', replicas: 1 }, { name: 'm3', replicas: 4 }];
    // m3 moves to an endpoint nobody answers, which Karmada's proxy cannot reach: its capacity is unknown from now on.
    const m3 = karmada.get('Cluster', '', 'm3')!;
    karmada.proxies.delete('m3');
    karmada.put({ ...m3, spec: { ...m3.spec, apiEndpoint: 'http://127.0.0.1:1' } });
    await until(() => view.members().some((m) => m.name === 'm3' && !m.healthy), 'm3 unreadable');
    karmada.put(policy('keep', '{"rebalance":true,"clusters":{"*":{"weight":1}}}'));
    karmada.put(binding('keep', 9, { clusters: assigned }));
    await until(() => stored('keep-deployment').status?.conditions?.some((c: { type: string }) => c.type === 'Scheduled'), 'keep scheduled');
    const plan = clustersOf('keep-deployment');
    assert.equal(plan.m3, 4, 'm3 keeps its 4');
    assert.equal(plan.m1! + plan.m2!, 5);
  });
});

describe('the Karmada transport: the write pace (karmada.bindingsPerSecond)', () => {
  it('past its burst, bindings are written as tokens come, queued again for then, none lost', async () => {
    // 1 a second, a burst of 2: six new bindings take about four seconds of fake time.
    const { karmada, clock, until, stop } = await karmadaRig({ bindingsPerSecond: 1 });
    try {
      const from = clock.now();
      karmada.put(policy('paced', '{"clusters":{"*":{"weight":1}}}'));
      const names = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
      for (const n of names) karmada.put({ ...binding(n, 3), metadata: { ...binding(n, 3).metadata, annotations: { 'propagationpolicy.karmada.io/name': 'paced', 'propagationpolicy.karmada.io/namespace': NS } } });
      const specWrites = () => karmada.patches.filter((p) => p.body.spec?.clusters).length;
      let most = 0;
      await until(() => {
        // Never more than the burst plus a token a second since the first.
        const allowed = 2 + Math.floor((clock.now() - from) / 1000);
        most = Math.max(most, specWrites() - allowed);
        return names.every((n) => !!karmada.get('ResourceBinding', NS, `${n}-deployment`)!.spec.clusters);
      }, 'all six scheduled', 30_000);
      assert.ok(most <= 0, `ahead of the pace by ${most}`);
      assert.ok(clock.now() - from >= 3_000, `six took ${clock.now() - from} ms of fake time: paced`);
    } finally {
      await stop();
    }
  });
});
