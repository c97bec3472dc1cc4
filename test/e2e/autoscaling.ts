// What the e2e suites with a real autoscaler share: the kubelets of the nodes it adds, the
// cluster's tainted system nodes, a gated StatefulSet whose pods each need a whole node, and the
// Cluster Autoscaler (kwok provider) with its node-group templates.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, type ControlPlane } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { admissionReviews, DECIDED_BY, seated } from './seatPolicy.js';
import { zoneCounts, ZONES } from './workloads.js';

export const ZONE = 'topology.kubernetes.io/zone';
const NOT_READY = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

/** Nodes of 4 CPUs: a pod asking 3 needs one of its own. */
const NODE_RESOURCES = { cpu: '4', memory: '16Gi', pods: '110' };

/**
 * Stands in for the kubelets of the nodes an autoscaler adds: Ready with their resources, the
 * API server's not-ready (and the node controller's unreachable) taints removed, every other
 * taint kept (Karpenter removes its own), the hostname label set to the node's name; only the
 * nodes `labelSelector` selects, if given (the others' state is someone else's).
 */
export function kubeletOfNewNodes(kube: Kube, labelSelector?: string): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        for (const n of await kube.list('v1', 'Node', undefined, labelSelector)) {
          const ready = (n.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
          const taints: Obj[] = n.spec?.taints ?? [];
          if (ready && !taints.some((t) => NOT_READY.has(t.key))) continue;
          const name = n.metadata.name as string;
          const now = new Date().toISOString();
          const updated = await kube.patch('v1', 'Node', undefined, name, {
            status: {
              capacity: NODE_RESOURCES, allocatable: NODE_RESOURCES,
              conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now }],
            },
          }, '/status');
          // The taints as they are now, and only if still so: taints read before the status write could put back
          // Karpenter's `karpenter.sh/unregistered`, removed meanwhile, for good (it registers a node once).
          const kept = (updated.spec?.taints ?? []).filter((t: Obj) => !NOT_READY.has(t.key));
          await kube.patch('v1', 'Node', undefined, name, {
            metadata: { resourceVersion: updated.metadata.resourceVersion, labels: { 'kubernetes.io/hostname': name } }, spec: { taints: kept.length > 0 ? kept : null },
          });
        }
      } catch { /* the next round tries again */ }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** The cluster's only nodes at first: one tainted system node per zone (no workload pod fits them). */
export async function systemNodes(kube: Kube): Promise<void> {
  for (const z of ZONES) await kube.addNode(`system-${z.slice(5)}`, z, { 'node-role': 'system' }, [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }], '4');
}

/**
 * A gated StatefulSet on pool `pool` (nodeSelector) whose pods each need a whole node; no
 * `zonekeeper.io/zones`: zonekeeper finds the zones the pool can grow into.
 */
export function pooledStatefulSet(namespace: string, name: string, pool: string, replicas: number, podSpec: Obj = {}): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name, namespace },
    spec: {
      replicas, serviceName: name, podManagementPolicy: 'Parallel', selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          schedulingGates: [{ name: 'zonekeeper.io/zone' }], nodeSelector: { pool }, terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }], ...podSpec,
        },
      },
    },
  };
}

/** Pod name → zone of its node once `count` pods of `app` are bound; and the pool's nodes per zone. */
export async function boundAndNodes(kube: Kube, namespace: string, app: string, pool: string, count: number,
  timeoutMs = 240_000): Promise<{ pods: Map<string, string>; nodes: string }> {
  const zoneOf = async () => new Map((await kube.list('v1', 'Node')).map((n) => [n.metadata.name as string, n.metadata.labels[ZONE] as string]));
  const pods = await eventually(`${count} pods of ${app} bound on added nodes`, async () => {
    const list = await kube.podsOf(namespace, `app=${app}`);
    if (list.length !== count || list.some((p) => !p.spec.nodeName)) return undefined;
    const zones = await zoneOf();
    return new Map(list.map((p) => [p.metadata.name as string, zones.get(p.spec.nodeName)!]));
  }, timeoutMs, 1000);
  const nodes = (await kube.list('v1', 'Node', undefined, `pool=${pool}`)).map((n) => n.metadata.labels[ZONE] as string);
  return { pods, nodes: zoneCounts(nodes) };
}

/**
 * The policy (1.36+) ahead of an autoscaler: a StatefulSet of 3 with the list b,c,a on the pool
 * `seats`, no gate in its template, seated, then scaled: each pod on its pin, marked by the
 * policy, no admission review, and one node added per pinned zone.
 */
export async function policySeatsGrown(kube: Kube, admin: string, namespace: string): Promise<void> {
  const list = ['zone-b', 'zone-c', 'zone-a'];
  const sts = pooledStatefulSet(namespace, 'seats', 'seats', 0);
  delete sts.spec.template.spec.schedulingGates;
  const created = await kube.create({ ...sts, metadata: { ...sts.metadata, annotations: { 'zonekeeper.io/zones': list.join(',') } } });
  await seated(kube, created, list, 2);
  const reviews = await admissionReviews(admin);
  await kube.scale('StatefulSet', namespace, 'seats', 3);
  const { pods, nodes } = await boundAndNodes(kube, namespace, 'seats', 'seats', 3);
  for (const [pod, zone] of pods) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
  assert.equal(nodes, 'zone-a=1 zone-b=1 zone-c=1', 'one node per pinned zone');
  for (const p of await kube.podsOf(namespace, 'app=seats')) assert.equal(p.metadata.labels?.[DECIDED_BY], 'policy', p.metadata.name);
  assert.equal(await admissionReviews(admin), reviews, 'no admission review for them');
}

const ROOT = new URL('../../', import.meta.url).pathname;
/** The Cluster Autoscaler's unpacker (../shared/cluster-autoscaler), and whether it is there. */
export const CA_UNPACK = join(process.env.KUBE_SHARED ?? join(ROOT, '../shared'), 'cluster-autoscaler/unpack.sh');
export const CA_UNPACKED = existsSync(CA_UNPACK);
/** The template label the kwok provider makes node groups by. */
export const GROUP_LABEL = 'zk-nodegroup';

/** One template Node per pool and zone: a node group of `min` to `max` (0 to 6) 4-CPU nodes labelled with the pool, with `taints`. */
export function nodeGroupTemplate(pool: string, zone: string, { min = 0, max = 6, taints }: { min?: number; max?: number; taints?: Obj[] } = {}): Obj {
  const name = `ng-${pool}-${zone.slice(5)}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name, labels: { [GROUP_LABEL]: name, pool, [ZONE]: zone, 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name },
      // Its desired count defaults to 0, and the kwok provider exits on a min-count above it.
      annotations: Object.fromEntries(Object.entries({ min, max, desired: min }).map(([k, v]) => [`cluster-autoscaler.kwok.nodegroup/${k}-count`, String(v)])),
    },
    ...(taints ? { spec: { taints } } : {}),
    status: { capacity: NODE_RESOURCES, allocatable: NODE_RESOURCES, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'template' }] },
  };
}

/** The Cluster Autoscaler started: the base URL of its /metrics, and how to start it again once it has ended. */
export interface ClusterAutoscaler { address: string; start: () => void }

/**
 * Starts the real Cluster Autoscaler (kwok provider, ../shared/cluster-autoscaler/README.md) with the
 * node groups of `templates`, `flags` added (how it scales down).
 */
export async function startClusterAutoscaler(cp: ControlPlane, kube: Kube, templates: Obj[], flags: string[]): Promise<ClusterAutoscaler> {
  const cm = (name: string, data: Record<string, string>) => kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' }, data });
  await cm('kwok-provider-config', { config: stringify({ apiVersion: 'v1alpha1', readNodesFrom: 'configmap', nodegroups: { fromNodeLabelKey: GROUP_LABEL }, nodes: { skipTaint: true }, configmap: { name: 'kwok-provider-templates' } }) });
  await cm('kwok-provider-templates', { templates: stringify({ apiVersion: 'v1', kind: 'List', items: templates }) });
  const bin = join(execFileSync('bash', [CA_UNPACK], { encoding: 'utf8' }).trim(), 'cluster-autoscaler');
  const address = `127.0.0.1:${await freePort()}`;
  const args = [
    `--kubeconfig=${cp.kubeconfig}`, '--cloud-provider=kwok', '--namespace=kube-system', '--scan-interval=2s',
    '--leader-elect=false', '--expander=random', `--address=${address}`, '--v=2', ...flags,
  ];
  const env = { ...process.env, POD_NAMESPACE: 'kube-system', KWOK_PROVIDER_MODE: 'local', KUBECONFIG: cp.kubeconfig };
  const start = () => void cp.start('cluster-autoscaler', bin, args, env);
  start();
  return { address: `http://${address}`, start };
}
