// End-to-end with a real Cluster Autoscaler (kwok provider: node groups of template Nodes, one per
// zone, all starting empty) beside the control plane and the default scheduler alone: zonekeeper
// writes each gated pod's zone into its spec, and the autoscaler, which never calls an extender,
// adds nodes where the pins are (docs/autoscalers.md).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { ControlPlane, freePort, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { tearDown, zoneCounts, ZONES } from './workloads.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const SHARED = process.env.KUBE_SHARED ?? join(ROOT, '../shared');
const UNPACK = join(SHARED, 'cluster-autoscaler/unpack.sh');
const NS = 'scaled';
const GROUP_LABEL = 'zk-nodegroup';

/** One template Node per zone: 4 CPUs, so a pod asking 3 needs a node of its own. */
function template(zone: string): Obj {
  const name = `ng-${zone.slice(5)}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name, labels: { [GROUP_LABEL]: name, 'topology.kubernetes.io/zone': zone, 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name },
      annotations: { 'cluster-autoscaler.kwok.nodegroup/min-count': '0', 'cluster-autoscaler.kwok.nodegroup/max-count': '6' },
    },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' }, allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'template' }],
    },
  };
}

/** A gated StatefulSet whose pods each need a whole node; its zones named, as scale-from-zero needs. */
const statefulSet = (replicas: number): Obj => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet',
  metadata: { name: 'db', namespace: NS, annotations: { 'zonekeeper.io/zones': ZONES.join(',') } },
  spec: {
    replicas, serviceName: 'db', podManagementPolicy: 'Parallel', selector: { matchLabels: { app: 'db' } },
    template: {
      metadata: { labels: { app: 'db' } },
      spec: { schedulingGates: [{ name: 'zonekeeper.io/zone' }], terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }] },
    },
  },
});

// This autoscaler watches resource.k8s.io/v1, served from Kubernetes 1.34 on.
const versions = kubeVersions().filter((k) => k.minor >= 34);
const unpacked = existsSync(UNPACK);
if (!unpacked && process.env.CI) throw new Error(`CI runs the Cluster Autoscaler e2e: no ${UNPACK}`);

for (const k of versions) describe(`[${k.version}] a real Cluster Autoscaler adds nodes where zonekeeper pinned the pods`, { skip: unpacked ? false : `no ${UNPACK}` }, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;

  before(async () => {
    await cp.up([{ name: 'default-scheduler', extender: false }]);
    kube = new Kube(cp.api);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const cm = (name: string, data: Record<string, string>) => kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' }, data });
    await cm('kwok-provider-config', { config: stringify({ apiVersion: 'v1alpha1', readNodesFrom: 'configmap', nodegroups: { fromNodeLabelKey: GROUP_LABEL }, nodes: { skipTaint: true }, configmap: { name: 'kwok-provider-templates' } }) });
    await cm('kwok-provider-templates', { templates: stringify({ apiVersion: 'v1', kind: 'List', items: ZONES.map(template) }) });
    const bin = execFileSync('bash', [UNPACK], { encoding: 'utf8' }).trim();
    cp.start('cluster-autoscaler', join(bin, 'cluster-autoscaler'), [
      `--kubeconfig=${cp.kubeconfig}`, '--cloud-provider=kwok', '--namespace=kube-system', '--scan-interval=2s',
      '--scale-down-enabled=false', '--leader-elect=false', '--expander=random', `--address=127.0.0.1:${await freePort()}`, '--v=2',
    ], { ...process.env, POD_NAMESPACE: 'kube-system', KWOK_PROVIDER_MODE: 'local', KUBECONFIG: cp.kubeconfig });
    stopKubelet = kubeletOfNewNodes(kube);
  });
  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  /** Pod name → zone of its node, once `count` pods are bound; and the nodes per zone. */
  async function boundAndNodes(count: number): Promise<{ pods: Map<string, string>; nodes: string }> {
    const zoneOf = async () => new Map((await kube.list('v1', 'Node')).map((n) => [n.metadata.name as string, n.metadata.labels['topology.kubernetes.io/zone'] as string]));
    const pods = await eventually(`${count} pods bound on autoscaled nodes`, async () => {
      const list = await kube.podsOf(NS, 'app=db');
      if (list.length !== count || list.some((p) => !p.spec.nodeName)) return undefined;
      const zones = await zoneOf();
      return new Map(list.map((p) => [p.metadata.name as string, zones.get(p.spec.nodeName)!]));
    }, 240_000, 1000);
    return { pods, nodes: zoneCounts((await zoneOf()).values()) };
  }

  it('3 gated pods pinned to 3 zones: one new node in each zone, each pod bound on its pin', async () => {
    await kube.create(statefulSet(3));
    const { pods, nodes } = await boundAndNodes(3);
    for (const [pod, zone] of pods) assert.equal(zone, ZONES[Number(pod.split('-').pop()) % 3], pod);
    assert.equal(nodes, 'zone-a=1 zone-b=1 zone-c=1');
  });

  it('scaled to 6: 2/2/2 nodes and pods, no node where no pod needed one', async () => {
    await kube.scale('StatefulSet', NS, 'db', 6);
    const { pods, nodes } = await boundAndNodes(6);
    assert.equal(zoneCounts(pods.values()), 'zone-a=2 zone-b=2 zone-c=2');
    assert.equal(nodes, 'zone-a=2 zone-b=2 zone-c=2');
  });
});

/**
 * Stands in for the kubelets of the nodes the autoscaler creates: Ready, the template's
 * resources, the admission's not-ready taint removed, the hostname label set to the node's name.
 */
function kubeletOfNewNodes(kube: Kube): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        for (const n of await kube.list('v1', 'Node')) {
          const ready = (n.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
          const tainted = (n.spec?.taints ?? []).some((t: Obj) => t.key === 'node.kubernetes.io/not-ready');
          if (ready && !tainted) continue;
          const name = n.metadata.name as string;
          const now = new Date().toISOString();
          await kube.patch('v1', 'Node', undefined, name, {
            status: {
              capacity: { cpu: '4', memory: '16Gi', pods: '110' }, allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
              conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now }],
            },
          }, '/status');
          await kube.patch('v1', 'Node', undefined, name, { metadata: { labels: { 'kubernetes.io/hostname': name } }, spec: { taints: null } });
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
