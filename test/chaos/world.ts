// The cluster a robustness run drives (docs/operations.md#robustness-runs): a real control plane,
// production-shaped pools in zones of unequal size, zonekeeper as users run it (two replicas on
// a Lease, reaching kube-apiserver through a proxy that can cut its watches; its webhook reached
// through one that can refuse it), and a workload of every kind it places, through each
// transport: its own scheduler's extender, the gate, admission.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ADMISSION_LABEL, admissionConfig, admissionReady, EVICTION_WEBHOOK, EVICTIONS_LABEL, evictionWebhookConfiguration, webhookConfiguration } from '../e2e/admissionWebhook.js';
import type { ControlPlane, Zonekeeper } from '../e2e/controlPlane.js';
import { eventually, Kube, type Obj } from '../e2e/kube.js';
import { addPools, deployment, preBoundVolume, SCHEDULER, statefulSet, type NodePool } from '../e2e/workloads.js';
import { grownStatefulSet, noAutoscaler, startAutoscaler, type RunAutoscaler } from './autoscaler.js';
import { watchEvictions } from './evictions.js';
import { karpenterStatefulSet, noKarpenter, startRunKarpenter, type RunKarpenter } from './karpenter.js';
import { cuttingProxy, type CuttingProxy } from './proxy.js';
import type { Disruption, RunPromise } from './promises.js';
import { v1alpha1WorkloadSpreadCrd } from '../e2e/workloadSpreadCrd.js';

export const NS = 'chaos';
export const ADMITTED_NS = 'chaos-admitted';
const ZONE = 'topology.kubernetes.io/zone';
const GATE = { schedulingGates: [{ name: 'zonekeeper.io/zone' }] };
const ZONEKEEPER_USER = 'system:serviceaccount:zonekeeper-system:zonekeeper';

/** Zones of unequal size, a tainted pool in two of them, and a zone of tainted nodes only. */
export const POOLS: NodePool[] = [
  { name: 'general', perZone: { 'zone-a': 3, 'zone-b': 2, 'zone-c': 1 } },
  { name: 'db', perZone: { 'zone-a': 1, 'zone-b': 1 }, labels: { pool: 'db' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
  { name: 'gpu', perZone: { 'zone-d': 1 }, labels: { accelerator: 'gpu' }, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] },
];

/** A workload of the run: what the walk may do to it, and what is promised of it. */
export interface RunWorkload {
  namespace: string;
  name: string;
  kind: 'StatefulSet' | 'Deployment';
  /** Replicas the walk may scale it between (equal: never scaled). */
  scale: [number, number];
  rollout: boolean;
  /** Repair is opted in: once healed, its pods must be back on their seats. */
  repaired?: boolean;
}

export interface World {
  cp: ControlPlane;
  kube: Kube;
  proxy: CuttingProxy;
  /** Between kube-apiserver and the primary's admission webhook: `block` makes the webhook unreachable. */
  admissionProxy: CuttingProxy;
  workloads: RunWorkload[];
  promises: RunPromise[];
  /** The replica kube-scheduler calls and the webhook reaches, and the other one; restarted by the walk. */
  replicas: { primary: Zonekeeper; standby: Zonekeeper };
  restart(which: 'primary' | 'standby'): Promise<Zonekeeper>;
  /** The Cluster Autoscaler growing the `grow` pool (1.34+), or why the run has none. */
  autoscaler: RunAutoscaler | string;
  /** Karpenter growing the `kp` pool (1.34+), or why the run has none. */
  karpenter: RunKarpenter | string;
  /** The nodes the run started with, by name: zone. */
  nodes: Map<string, string>;
  /** The voluntary evictions the API server showed in the run's namespace, oldest first (evictions.ts; the zone-at-a-time promise reads them). */
  disruptions: Disruption[];
  stop(): Promise<void>;
}

/** Zone limits the run promises: the web Deployment's zone-c maximum, the WorkloadSpreads' quotas (Fixed, Adaptive). */
const WEB_MAX = { 'zone-c': 1 };
const SPREAD_QUOTA = { 'zone-a': 2, 'zone-b': 1 };
const ADAPTIVE_QUOTA = { 'zone-a': 1, 'zone-b': 1 };
/** The zones Karpenter's NodePool offers. */
const KARPENTER_ZONES = ['zone-a', 'zone-b', 'zone-c'];
/** Repair's budget (`rebalance.evictionsPerMinute`) in the run. */
const EVICTIONS_PER_MINUTE = 6;
/**
 * How long a pod may stay unbound once the run is quiet before it must say why: client-go's
 * reflectors back off up to 60 s (30 s, jittered up to twice) after repeated kube-apiserver kills,
 * and until kube-scheduler's pod informer is back no pod it has not tried carries a condition.
 */
const PENDING_EXPLAINED_AFTER_SECONDS = 90;

export async function buildWorld(cp: ControlPlane, pick: (n: number) => number): Promise<World> {
  const webhook = await admissionConfig();
  const standbyAdmission = await admissionConfig();
  // Both replicas keep the eviction gate's caBundle; kube-apiserver reaches the primary's, as it does for admission.
  for (const a of [webhook, standbyAdmission]) a.admission.certificate.evictionWebhookConfiguration = EVICTION_WEBHOOK;
  const base = {
    deletionCost: { enabled: true, intervalSeconds: 2 },
    rebalance: { enabled: true, zoneStableSeconds: 10, intervalSeconds: 2, evictionsPerMinute: EVICTIONS_PER_MINUTE },
    gate: { intervalSeconds: 1 },
    workloadSpread: { writeStatus: true },
    zoneRollout: { enabled: true, intervalSeconds: 2 },
    leaderElection: { namespace: 'zonekeeper-system' },
  };
  await cp.up([{ name: 'default-scheduler', extender: false }, { name: SCHEDULER, extender: true }], { ...base, admission: webhook.admission });
  const kube = new Kube(cp.api);
  await cp.zonekeeper!.stop();
  // zonekeeper as its own ServiceAccount (cluster-admin, so that a policy can refuse its writes alone), through the proxy.
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'zonekeeper-system' } });
  await kube.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'zonekeeper', namespace: 'zonekeeper-system' } });
  await kube.create({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'zonekeeper-chaos' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'zonekeeper', namespace: 'zonekeeper-system' }],
  });
  const admin = parse(readFileSync(cp.kubeconfig, 'utf8'));
  const apiPort = Number(new URL(admin.clusters[0].cluster.server).port);
  const proxy = await cuttingProxy(apiPort);
  const token = await longToken(kube);
  admin.clusters[0].cluster.server = `https://127.0.0.1:${proxy.port}`;
  admin.users = [{ name: 'admin', user: { token } }];
  const kubeconfig = join(cp.dir, 'kubeconfig-zonekeeper-proxied');
  writeFileSync(kubeconfig, stringify(admin));
  const configs = { primary: { ...base, admission: webhook.admission }, standby: { ...base, admission: standbyAdmission.admission } };
  const replicas = {
    primary: await cp.startZonekeeper(configs.primary, kubeconfig),
    standby: await cp.startReplica('zonekeeper-standby', configs.standby, kubeconfig),
  };
  const restart = async (which: 'primary' | 'standby') => {
    await replicas[which].stop('SIGKILL');
    replicas[which] = which === 'primary' ? await cp.startZonekeeper(configs.primary, kubeconfig) : await cp.startReplica('zonekeeper-standby', configs.standby, kubeconfig);
    return replicas[which];
  };

  const nodes = await addPools(kube, POOLS);
  const crd = v1alpha1WorkloadSpreadCrd();
  await kube.create(crd);
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { [EVICTIONS_LABEL]: 'enabled' } } });
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ADMITTED_NS, labels: { [ADMISSION_LABEL]: 'enabled' } } });
  const admissionProxy = await cuttingProxy(webhook.port);
  await kube.create(webhookConfiguration(admissionProxy.port));
  await kube.create(evictionWebhookConfiguration(admissionProxy.port));
  await kube.create(refusingPolicy());
  await eventually('one replica holds the Lease', async () => (await Promise.all(Object.values(replicas).map(leads))).some(Boolean), 60_000, 500);
  await eventually('the primary holds the Lease', async () => {
    if (await leads(replicas.primary)) return true;
    await restart('standby');
    return false;
  }, 60_000, 2000);
  await admissionReady(kube, replicas.primary.admin);
  await eventually('the WorkloadSpread CRD is watched', async () =>
    ((await (await fetch(`${replicas.primary.admin}/debug/cache`)).json()) as Obj).workloadSpreadCRD === 'present', 60_000, 500);

  const zones = [...new Set(POOLS.flatMap((p) => Object.keys(p.perZone)))].sort();
  const autoscaler = noAutoscaler(cp) ?? await startAutoscaler(cp, kube, zones, () => Object.values(replicas));
  const karpenter = noKarpenter(cp) ?? await startRunKarpenter(cp, kube, KARPENTER_ZONES);
  const disruptions: Disruption[] = [];
  const stopWatch = watchEvictions(kube, NS, disruptions);
  const { workloads, promises } = await createWorkloads(kube, pick, typeof autoscaler !== 'string', typeof karpenter !== 'string');
  return {
    cp, kube, proxy, admissionProxy, autoscaler, karpenter, workloads, promises, nodes, restart, disruptions,
    get replicas() { return replicas; },
    async stop() {
      await stopWatch();
      await proxy.close();
      await admissionProxy.close();
      if (typeof autoscaler !== 'string') await autoscaler.stop();
      if (typeof karpenter !== 'string') await karpenter.stop();
    },
  };
}

/** Whether a replica holds the Lease (its own word). */
export async function leads(z: Zonekeeper): Promise<boolean> {
  try {
    return /^zonekeeper_leader 1$/m.test(await (await fetch(`${z.admin}/metrics`, { signal: AbortSignal.timeout(2000) })).text());
  } catch {
    return false;
  }
}

/** Requests a replica answered 500 since it started (zonekeeper_internal_errors_total); unreachable or stopped: undefined. */
export async function internalErrors(z: Zonekeeper): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${z.admin}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    return text.split('\n').filter((l) => l.startsWith('zonekeeper_internal_errors_total{')).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  } catch {
    return undefined;
  }
}

/** What a replica's log says of its last requests answered 500 (route and error), for the violation's detail. */
export function failedRequests(z: Zonekeeper, last = 3): string[] {
  const lines = readFileSync(z.log, 'utf8').split('\n').filter((l) => l.includes('"msg":"request failed"'));
  return lines.slice(-last).map((l) => {
    try {
      const e = JSON.parse(l) as { path?: string; err?: string; stack?: string };
      return `${e.path}: ${e.err} (${(e.stack ?? '').split('\n').slice(1, 4).map((s) => s.trim()).join(' ← ')})`;
    } catch {
      return l.slice(0, 500); // a line still being written
    }
  });
}

/** A token for zonekeeper's ServiceAccount that outlives a long run (the harness's lasts an hour). */
async function longToken(kube: Kube): Promise<string> {
  const review = await kube.call('POST', '/api/v1/namespaces/zonekeeper-system/serviceaccounts/zonekeeper/token', {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7 * 24 * 3600 },
  });
  return review.status.token;
}

/** The policy a "writes refused" fault binds: every update zonekeeper makes to pods and workloads is refused. */
function refusingPolicy(): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'chaos-refuse-zonekeeper-writes' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['', 'apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods', 'statefulsets', 'deployments'] }] },
      matchConditions: [{ name: 'zonekeeper', expression: `request.userInfo.username == '${ZONEKEEPER_USER}'` }],
      validations: [{ expression: 'false', message: 'refused by the robustness run (writes refused)' }],
    },
  };
}

/** The binding that turns the refusal on; deleting it turns it off. */
export const REFUSING_BINDING: Obj = {
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'chaos-refuse-zonekeeper-writes' },
  spec: { policyName: 'chaos-refuse-zonekeeper-writes', validationActions: ['Deny'] },
};

/**
 * A workload kept off the GPU zone by its own affinity. Where a Cluster Autoscaler runs, every zone
 * of the cluster its pods allow counts as one it may grow into (docs/autoscalers.md), and it grows
 * no node for an extender's pin: without this the general workloads would be given seats in zone-d.
 */
function offGpuZone(workload: Obj): Obj {
  const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'NotIn', values: ['zone-d'] }] }] } } };
  workload.spec.template.spec = { ...workload.spec.template.spec, affinity };
  return workload;
}

type Created = { workloads: RunWorkload[]; promises: RunPromise[] };

async function createWorkloads(k: Kube, pick: (n: number) => number, grows: boolean, karpenter: boolean): Promise<Created> {
  const kube = { create: (o: Obj) => k.create(grows && ['StatefulSet', 'Deployment'].includes(o.kind) ? offGpuZone(o) : o) };
  const zones = ['zone-a', 'zone-b', 'zone-c'];
  const container = { name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } };
  const withSchedulerName = { schedulerName: SCHEDULER };
  // The extender: a pinned StatefulSet whose evictions go a zone at a time, and one whose claims are bound in zones chosen by the seed.
  const pin = statefulSet(NS, 'pin', 3, withSchedulerName);
  pin.metadata.annotations = { 'zonekeeper.io/zone-disruption-budget': 'zone' };
  await kube.create(pin);
  const volumeZones = [0, 1, 2].map(() => zones[pick(zones.length)]!);
  for (const [i, z] of volumeZones.entries()) await kube.create(preBoundVolume(NS, `data-vol-${i}`, z));
  await kube.create(statefulSet(NS, 'vol', 3, { ...withSchedulerName, containers: [{ ...container, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
    { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } }] }));
  // The extender: an OnDelete StatefulSet the walk rolls out, zonekeeper replacing its pods a zone at a time.
  const roll = statefulSet(NS, 'roll', 3, withSchedulerName, { updateStrategy: { type: 'OnDelete' } });
  roll.metadata.annotations = { 'zonekeeper.io/zone-rollout': 'true', 'zonekeeper.io/zone-disruption-budget': 'zone' };
  await kube.create(roll);
  // The gate, with Karpenter: a StatefulSet of its pool, whose NodeClaims the walk deletes two zones at once.
  if (karpenter) await kube.create(karpenterStatefulSet(NS, 'kp', 3));
  // The extender: zone balance under a maximum, and a WorkloadSpread's quotas (a last subset without one).
  const web = deployment(NS, 'web', 4);
  web.metadata.annotations = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { '*': { weight: 1 }, 'zone-c': { weight: 1, maxReplicas: WEB_MAX['zone-c'] } } }) };
  await kube.create(web);
  const term = (values: string[]) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values }] });
  await kube.create({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'spread', namespace: NS },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'spread' },
      subsets: [
        { name: 'a', requiredNodeSelectorTerm: term(['zone-a']), maxReplicas: SPREAD_QUOTA['zone-a'] },
        { name: 'b', requiredNodeSelectorTerm: term(['zone-b']), maxReplicas: SPREAD_QUOTA['zone-b'] },
        { name: 'rest', requiredNodeSelectorTerm: term(['zone-c']) },
      ],
    },
  });
  await kube.create(deployment(NS, 'spread', 4));
  // The same, Adaptive: a subset's pod that cannot be placed falls through to the next subset, within the quotas.
  await kube.create({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'adaptive', namespace: NS },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'flex' },
      scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } },
      subsets: [
        { name: 'a', requiredNodeSelectorTerm: term(['zone-a']), maxReplicas: ADAPTIVE_QUOTA['zone-a'] },
        { name: 'b', requiredNodeSelectorTerm: term(['zone-b']), maxReplicas: ADAPTIVE_QUOTA['zone-b'] },
        { name: 'rest', requiredNodeSelectorTerm: term(['zone-c']) },
      ],
    },
  });
  await kube.create(deployment(NS, 'flex', 3));
  // The gate: a pinned StatefulSet, and instance IDs with repair opted in behind a PodDisruptionBudget.
  await kube.create(statefulSet(NS, 'gated', 3, GATE));
  const ids = deployment(NS, 'ids', 3);
  ids.metadata.annotations = { 'zonekeeper.io/instance-ids': 'true', 'zonekeeper.io/rebalance': 'true' };
  ids.spec.template.spec = { ...ids.spec.template.spec, ...GATE };
  delete ids.spec.template.spec.schedulerName;
  await kube.create(ids);
  await kube.create({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'ids', namespace: NS }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'ids' } } } });
  // Admission: a pinned StatefulSet whose template names neither zonekeeper nor its gate.
  await kube.create(statefulSet(ADMITTED_NS, 'admitted', 3));
  // The gate, with the autoscaler: a pool with no node in any zone, each pod a node of its own.
  if (grows) await k.create(grownStatefulSet(NS, 'grown', 2));

  const sts = (namespace: string, name: string, scale: [number, number]): RunWorkload => ({ namespace, name, kind: 'StatefulSet', scale, rollout: false });
  const dep = (name: string, scale: [number, number]): RunWorkload => ({ namespace: NS, name, kind: 'Deployment', scale, rollout: true });
  const workloads = [sts(NS, 'pin', [1, 6]), sts(NS, 'roll', [3, 6]), ...(karpenter ? [sts(NS, 'kp', [3, 3])] : []), sts(NS, 'vol', [3, 3]), sts(NS, 'gated', [1, 6]), sts(ADMITTED_NS, 'admitted', [1, 6]),
    dep('web', [2, 6]), dep('spread', [2, 6]), dep('flex', [1, 4]), { ...dep('ids', [2, 5]), repaired: true }, ...(grows ? [sts(NS, 'grown', [1, 4])] : [])];
  return {
    workloads,
    promises: [
      { kind: 'pinned', namespace: NS, name: 'pin' }, { kind: 'pinned', namespace: NS, name: 'vol', claim: 'data' },
      { kind: 'pinned', namespace: NS, name: 'gated' }, { kind: 'pinned', namespace: ADMITTED_NS, name: 'admitted' },
      ...(grows ? [{ kind: 'pinned', namespace: NS, name: 'grown' } as const] : []),
      { kind: 'maximum', namespace: NS, name: 'web', max: WEB_MAX }, { kind: 'maximum', namespace: NS, name: 'spread', max: SPREAD_QUOTA, perRevision: true },
      { kind: 'maximum', namespace: NS, name: 'flex', max: ADAPTIVE_QUOTA, perRevision: true },
      { kind: 'instance-ids', namespace: NS, name: 'ids' }, { kind: 'never-evicted', namespace: NS, name: 'vol' },
      { kind: 'repair-disruptions', namespace: NS, name: 'ids', perMinute: EVICTIONS_PER_MINUTE },
      { kind: 'pinned', namespace: NS, name: 'roll' }, ...(karpenter ? [{ kind: 'pinned', namespace: NS, name: 'kp' } as const] : []),
      ...['pin', 'roll', ...(karpenter ? ['kp'] : [])].map((name): RunPromise => ({ kind: 'zone-at-a-time', namespace: NS, name })),
      ...workloads.map((w): RunPromise => ({ kind: 'pending-reason', namespace: w.namespace, name: w.name, afterSeconds: PENDING_EXPLAINED_AFTER_SECONDS })),
    ],
  };
}
