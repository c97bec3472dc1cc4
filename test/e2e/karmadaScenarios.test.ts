// Karmada's own scheduling scenarios (karmada-io/karmada test/e2e/suites/base at f8fdd02: scheduling, fieldselector,
// propagationpolicy, clusteraffinities, rescheduling, tainttoleration, spread_by_region), ported to the project's e2e on a
// real Karmada with three members on the newest Kubernetes. The only change to each policy is `schedulerName: zonekeeper`;
// each asserts what the scenario asserts of karmada-scheduler. Which scenarios are not ported, and why: docs/design.md#across-clusters.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeVersions } from './controlPlane.js';
import { federation, karmadaDeployment, leastAccessKubeconfig, startFederationScheduler, type Federation } from './federation.js';
import { eventually, type Obj } from './kube.js';

const NS = 'kscn';
const MEMBERS = ['m1', 'm2', 'm3'];
const newest = kubeVersions().filter((k) => k.minor >= 31).at(-1);
const DIVIDED = { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' };
const CONFIG = {
  leaderElection: { namespace: 'zonekeeper-system', leaseName: 'zonekeeper-karmada', leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 },
  karmada: { resyncSeconds: 5, memberStalenessSeconds: 10 },
  cluster: { backoffMaxMs: 2000 },
};

/** A PropagationPolicy as Karmada's e2e writes it, naming zonekeeper. */
function policy(name: string, selectors: Obj[], placement: Obj, kind: 'PropagationPolicy' | 'ClusterPropagationPolicy' = 'PropagationPolicy'): Obj {
  return {
    apiVersion: 'policy.karmada.io/v1alpha1', kind, metadata: { name, ...(kind === 'PropagationPolicy' ? { namespace: NS } : {}) },
    spec: { schedulerName: 'zonekeeper', resourceSelectors: selectors, placement },
  };
}

const job = (name: string, parallelism: number): Obj => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: NS },
  spec: { parallelism, completions: parallelism, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
});

(newest ? describe : describe.skip)(`[${newest?.version ?? 'none ≥ 1.31'}] Karmada's scheduling scenarios, schedulerName: zonekeeper`, () => {
  let fed: Federation;
  const rb = (name: string, kind = 'ResourceBinding') => fed.karmada.get('work.karmada.io/v1alpha2', kind, kind === 'ResourceBinding' ? NS : undefined, name);
  const targets = async (name: string, kind?: string) => ((await rb(name, kind)).spec?.clusters ?? []).map((c: Obj) => c.name as string).sort();
  const member = (name: string) => fed.members.find((m) => m.name === name)!;
  /** A member's copy of the object, once it has the field `path` as asked. */
  const inMember = (m: string, apiVersion: string, kind: string, name: string, ok: (o: Obj) => boolean) => eventually(`${kind} ${name} in ${m} as asked`, async () => {
    const o = await member(m).kube.get(apiVersion, kind, kind === 'ClusterRole' ? undefined : NS, name).catch(() => undefined);
    return o && ok(o) ? o : undefined;
  }, 60_000, 500);
  const absent = (m: string, apiVersion: string, kind: string, name: string) => eventually(`${kind} ${name} gone from ${m}`, async () =>
    !(await member(m).kube.get(apiVersion, kind, NS, name).catch(() => undefined)), 60_000, 500);
  const scheduledTo = (name: string, want: string[], kind?: string) => eventually(`${name} scheduled to ${want.join(',')}`, async () => {
    const b = await rb(name, kind);
    const cond = (b.status?.conditions ?? []).find((c: Obj) => c.type === 'Scheduled');
    const names = (b.spec?.clusters ?? []).map((c: Obj) => c.name as string).sort();
    // The status follows the spec: observed generation current means the status of this plan is written.
    const current = b.status?.schedulerObservedGeneration === b.metadata.generation;
    return cond?.status === 'True' && current && JSON.stringify(names) === JSON.stringify([...want].sort()) ? b : undefined;
  }, 60_000, 500).catch(async (err: Error) => {
    const b = await rb(name, kind);
    throw new Error(`${err.message}; the binding: ${JSON.stringify({ generation: b.metadata.generation, spec: { clusters: b.spec.clusters }, status: b.status })}`);
  });
  const label = (m: string, labels: Record<string, string | null>) => fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, m, { metadata: { labels } });

  before(async () => {
    fed = await federation(newest!.bin, MEMBERS, NS);
    await startFederationScheduler(fed.members[0]!.cp, 'zonekeeper-karmada-scn', leastAccessKubeconfig(fed), CONFIG);
  });
  after(() => fed?.down());

  it('[ReplicaScheduling] Duplicated, Divided with no weights, static weights i+1; each rescaled (Cases 1–6)', async () => {
    const selector = (name: string) => [{ apiVersion: 'apps/v1', kind: 'Deployment', name }];
    const weights = { staticWeightList: MEMBERS.map((m, i) => ({ targetCluster: { clusterNames: [m] }, weight: i + 1 })) };
    const rows = [
      { name: 'dup', placement: { clusterAffinity: { clusterNames: MEMBERS } }, replicas: 3, want: () => 3, rescale: 2, wantAfter: () => 2 },
      { name: 'div', placement: { clusterAffinity: { clusterNames: MEMBERS }, replicaScheduling: DIVIDED }, replicas: 6, want: () => 2, rescale: 9, wantAfter: () => 3 },
      { name: 'sw', placement: { clusterAffinity: { clusterNames: MEMBERS }, replicaScheduling: { ...DIVIDED, weightPreference: weights } }, replicas: 6,
        want: (i: number) => i + 1, rescale: 12, wantAfter: (i: number) => 2 * (i + 1) },
    ];
    for (const r of rows) {
      await fed.karmada.create(karmadaDeployment(NS, r.name, r.replicas));
      await fed.karmada.create(policy(r.name, selector(r.name), r.placement));
    }
    for (const r of rows) {
      for (const [i, m] of MEMBERS.entries()) await inMember(m, 'apps/v1', 'Deployment', r.name, (o) => o.spec.replicas === r.want(i));
      await fed.karmada.scale('Deployment', NS, r.name, r.rescale);
    }
    for (const r of rows) for (const [i, m] of MEMBERS.entries()) await inMember(m, 'apps/v1', 'Deployment', r.name, (o) => o.spec.replicas === r.wantAfter(i));
    // The Event karmada-scheduler records on the resource template (propagationpolicy [BasicCase]).
    const events = await fed.karmada.list('v1', 'Event', NS);
    assert.ok(events.some((e) => e.involvedObject.kind === 'Deployment' && e.involvedObject.name === 'sw' && e.reason === 'ScheduleBindingSucceed'
      && /^Binding has been scheduled successfully\. Result: \{/.test(e.message)), 'ScheduleBindingSucceed on the Deployment');
  });

  it('[JobReplicaScheduling] a Job divided by static weights: member i runs parallelism i+1', async () => {
    const weights = { staticWeightList: MEMBERS.map((m, i) => ({ targetCluster: { clusterNames: [m] }, weight: i + 1 })) };
    await fed.karmada.create(job('sum', 6));
    await fed.karmada.create(policy('sum', [{ apiVersion: 'batch/v1', kind: 'Job', name: 'sum' }],
      { clusterAffinity: { clusterNames: MEMBERS }, replicaScheduling: { ...DIVIDED, weightPreference: weights } }));
    for (const [i, m] of MEMBERS.entries()) await inMember(m, 'batch/v1', 'Job', 'sum', (o) => o.spec.parallelism === i + 1);
  });

  it('fieldselector and a ClusterRole through a ClusterPropagationPolicy (a ClusterResourceBinding without replicas)', async () => {
    const fields = [['m1', 'huaweicloud', 'cn-south-1'], ['m2', 'huaweicloud', 'cn-north-1'], ['m3', 'kind', 'cn-east-1']];
    for (const [m, provider, region] of fields) await fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, m!, { spec: { provider, region } });
    await fed.karmada.create(karmadaDeployment(NS, 'fs', 3));
    await fed.karmada.create(policy('fs', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'fs' }], { clusterAffinity: { clusterNames: MEMBERS, fieldSelector: {
      matchExpressions: [{ key: 'provider', operator: 'In', values: ['huaweicloud'] }, { key: 'region', operator: 'NotIn', values: ['cn-north-1'] }] } } }));
    await scheduledTo('fs-deployment', ['m1']);
    await fed.karmada.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'scn-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    await fed.karmada.create(policy('scn-reader', [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'scn-reader' }],
      { clusterAffinity: { clusterNames: MEMBERS } }, 'ClusterPropagationPolicy'));
    await scheduledTo('scn-reader-clusterrole', MEMBERS, 'ClusterResourceBinding');
    for (const m of MEMBERS) await inMember(m, 'rbac.authorization.k8s.io/v1', 'ClusterRole', 'scn-reader', () => true);
  });

  it('clusteraffinities: the first group that fits, failing over when its label goes, kept there, back under a WorkloadRebalancer', async () => {
    await label('m1', { 'scn-group': 'one' });
    await label('m2', { 'scn-group': 'two' });
    await fed.karmada.create(karmadaDeployment(NS, 'ca', 2));
    await fed.karmada.create(policy('ca', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'ca' }], { clusterAffinities: [
      { affinityName: 'group1', labelSelector: { matchLabels: { 'scn-group': 'one' } } },
      { affinityName: 'group2', labelSelector: { matchLabels: { 'scn-group': 'two' } } }] }));
    await scheduledTo('ca-deployment', ['m1']);
    await inMember('m1', 'apps/v1', 'Deployment', 'ca', () => true);
    await label('m1', { 'scn-group': 'not-ok' });
    const moved = await scheduledTo('ca-deployment', ['m2']);
    assert.equal(moved.status.schedulerObservingAffinityName, 'group2');
    await absent('m1', 'apps/v1', 'Deployment', 'ca');
    await label('m1', { 'scn-group': 'one' });
    // The label is back: Karmada keeps the observed group until a WorkloadRebalancer asks.
    await fed.karmada.scale('Deployment', NS, 'ca', 3);
    const kept = await eventually('rescheduled for 3, still group2', async () => {
      const b = await rb('ca-deployment');
      const planned = (b.spec?.clusters ?? []).every((c: Obj) => c.replicas === 3) && b.spec?.replicas === 3;
      return planned && b.status?.schedulerObservedGeneration === b.metadata.generation ? b : undefined;
    }, 60_000, 500);
    assert.deepEqual(await targets('ca-deployment'), ['m2']);
    assert.equal(kept.status.schedulerObservingAffinityName, 'group2');
    // Karmada compares the rebalancer's creation with lastScheduledTime to the second: one made in the same second asks nothing.
    await new Promise((r) => setTimeout(r, 1100));
    await fed.karmada.create({ apiVersion: 'apps.karmada.io/v1alpha1', kind: 'WorkloadRebalancer', metadata: { name: 'ca-back' },
      spec: { workloads: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'ca' }] } });
    const back = await scheduledTo('ca-deployment', ['m1']);
    assert.equal(back.status.schedulerObservingAffinityName, 'group1');
    assert.ok(back.spec.rescheduleTriggeredAt, 'the rebalancer set rescheduleTriggeredAt');
  });

  it('clusterAffinity switched to clusterAffinities on a live policy: the new placement is carried out', async () => {
    await fed.karmada.create(karmadaDeployment(NS, 'sw2', 1));
    await fed.karmada.create(policy('sw2', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'sw2' }], { clusterAffinity: { clusterNames: ['m1'] } }));
    await scheduledTo('sw2-deployment', ['m1']);
    await fed.karmada.patch('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, 'sw2',
      { spec: { placement: { clusterAffinity: null, clusterAffinities: [{ affinityName: 'only', clusterNames: ['m2'] }] } } });
    await scheduledTo('sw2-deployment', ['m2']);
    await inMember('m2', 'apps/v1', 'Deployment', 'sw2', () => true);
  });

  it('rescheduling: a label changed on the one member the affinity names removes the workload; changed back, it returns', async () => {
    await label('m3', { 'scn-ok': 'ok' });
    await fed.karmada.create(karmadaDeployment(NS, 'lbl', 1));
    await fed.karmada.create(policy('lbl', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'lbl' }], { clusterAffinity: { labelSelector: { matchLabels: { 'scn-ok': 'ok' } } } }));
    await inMember('m3', 'apps/v1', 'Deployment', 'lbl', () => true);
    await label('m3', { 'scn-ok': 'not_ok' });
    await absent('m3', 'apps/v1', 'Deployment', 'lbl');
    const cond = ((await rb('lbl-deployment')).status?.conditions ?? []).find((c: Obj) => c.type === 'Scheduled');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'NoClusterFit']);
    await label('m3', { 'scn-ok': 'ok' });
    await inMember('m3', 'apps/v1', 'Deployment', 'lbl', () => true);
  });

  it('spread_by_region: cluster 1/1 and region 2/2 over two regions give a member in each; region 1/1 then gives one', async () => {
    for (const [m, region] of [['m1', 'scn-1'], ['m2', 'scn-2'], ['m3', '']]) {
      await fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, m!, { spec: { region: region || null } });
    }
    await fed.karmada.create(karmadaDeployment(NS, 'reg', 2));
    const placement = (n: number) => ({ spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1, maxGroups: 1 }, { spreadByField: 'region', minGroups: n, maxGroups: n }] });
    await fed.karmada.create(policy('reg', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'reg' }], placement(2)));
    await scheduledTo('reg-deployment', ['m1', 'm2']);
    await fed.karmada.patch('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, 'reg', { spec: { placement: placement(1) } });
    await eventually('one member', async () => (await targets('reg-deployment')).length === 1, 60_000, 500);
  });

  it('opting a running workload in and moving it off: the policy re-created with the other schedulerName (Karmada forbids changing it); the member copy never goes', async () => {
    const selector = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'mv' }];
    const placement = { clusterAffinity: { clusterNames: ['m1', 'm2'] }, replicaScheduling: DIVIDED };
    await fed.karmada.create(karmadaDeployment(NS, 'mv', 4));
    await fed.karmada.create({ ...policy('mv', selector, placement), spec: { ...policy('mv', selector, placement).spec, schedulerName: 'default-scheduler' } });
    await inMember('m1', 'apps/v1', 'Deployment', 'mv', (o) => o.spec.replicas === 2);
    const change = await fed.karmada.patch('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, 'mv', { spec: { schedulerName: 'zonekeeper' } }).then(() => 'changed', (e: Error) => e.message);
    assert.match(change, /schedulerName should not be updated/, 'Karmada\'s webhook refuses the change in place');
    let gone = 0, sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if (!(await member('m1').kube.get('apps/v1', 'Deployment', NS, 'mv').catch(() => undefined))) gone++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    for (const scheduler of ['zonekeeper', 'default-scheduler']) {
      await fed.karmada.delete('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, 'mv');
      // Karmada's finalizer releases the binding first: the name is free once the policy is gone.
      await eventually('the old policy gone', async () => !(await fed.karmada.get('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, 'mv').catch(() => undefined)), 60_000, 250);
      await fed.karmada.create({ ...policy('mv', selector, placement), spec: { ...policy('mv', selector, placement).spec, schedulerName: scheduler } });
      await eventually(`mv's binding names ${scheduler}`, async () => (await rb('mv-deployment')).spec.schedulerName === scheduler, 60_000, 500);
      await fed.karmada.scale('Deployment', NS, 'mv', scheduler === 'zonekeeper' ? 6 : 8);
      for (const m of ['m1', 'm2']) await inMember(m, 'apps/v1', 'Deployment', 'mv', (o) => o.spec.replicas === (scheduler === 'zonekeeper' ? 3 : 4));
    }
    sampling = false;
    await sampler;
    assert.equal(gone, 0, 'm1\'s copy of the Deployment never went away while the policy was re-created');
  });

  it('tainttoleration: every member tainted with its own name, the policy tolerating m1\'s: only m1', async () => {
    for (const m of MEMBERS) {
      await fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, m, { spec: { taints: [{ key: 'cluster-toleration.karmada.io', value: m, effect: 'NoSchedule' }] } });
    }
    try {
      await fed.karmada.create(karmadaDeployment(NS, 'tol', 1));
      await fed.karmada.create(policy('tol', [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tol' }], { clusterAffinity: { clusterNames: MEMBERS },
        clusterTolerations: [{ key: 'cluster-toleration.karmada.io', operator: 'Equal', value: 'm1', effect: 'NoSchedule' }] }));
      await scheduledTo('tol-deployment', ['m1']);
    } finally {
      for (const m of MEMBERS) await fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, m, { spec: { taints: null } });
    }
  });
});
