// The Cluster Autoscaler in a robustness run (1.34 and later, where it runs; docs/operations.md#robustness-runs):
// its kwok provider with an empty node group of a tainted pool `grow` in every zone of the run,
// and a gated StatefulSet of that pool, so that every seat is a zone with no node to grow into.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubeletOfNewNodes, NODE_RESOURCES, pooledStatefulSet } from '../e2e/autoscaling.js';
import { freePort, type ControlPlane, type Zonekeeper } from '../e2e/controlPlane.js';
import { eventually, type Kube, type Obj } from '../e2e/kube.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const UNPACK = join(process.env.KUBE_SHARED ?? join(ROOT, '../shared'), 'cluster-autoscaler/unpack.sh');
const GROUP_LABEL = 'zk-nodegroup';
const POOL = 'grow';
const TAINT = { key: 'dedicated', value: POOL, effect: 'NoSchedule' };
/** This autoscaler watches resource.k8s.io/v1, served from Kubernetes 1.34 on. */
const MIN_MINOR = 34;

export interface RunAutoscaler {
  /** Starts it again if it ended by itself; returns how it ended, if it did. */
  revive(): string | undefined;
  stop(): Promise<void>;
}

/** Why the run has no autoscaler on this control plane, or undefined: it can have one. */
export function noAutoscaler(cp: ControlPlane): string | undefined {
  if (cp.minor < MIN_MINOR) return `the Cluster Autoscaler needs Kubernetes 1.${MIN_MINOR}+`;
  if (!existsSync(UNPACK)) return `no ${UNPACK}`;
  return undefined;
}

/** An empty node group (min 0, max 6) of 4-CPU nodes of the pool in `zone`, tainted so that no other workload lands there. */
function template(zone: string): Obj {
  const name = `ng-${POOL}-${zone.slice(5)}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name, labels: { [GROUP_LABEL]: name, pool: POOL, 'topology.kubernetes.io/zone': zone, 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name },
      annotations: { 'cluster-autoscaler.kwok.nodegroup/min-count': '0', 'cluster-autoscaler.kwok.nodegroup/max-count': '6' },
    },
    spec: { taints: [TAINT] },
    status: { capacity: NODE_RESOURCES, allocatable: NODE_RESOURCES, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'template' }] },
  };
}

/** Starts the autoscaler and the kubelets of the nodes it adds; resolves once every replica has found it (its status ConfigMap). */
export async function startAutoscaler(cp: ControlPlane, kube: Kube, zones: readonly string[], replicas: () => Zonekeeper[]): Promise<RunAutoscaler> {
  const cm = (name: string, data: Record<string, string>) => kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' }, data });
  await cm('kwok-provider-config', {
    config: stringify({ apiVersion: 'v1alpha1', readNodesFrom: 'configmap', nodegroups: { fromNodeLabelKey: GROUP_LABEL }, nodes: { skipTaint: true }, configmap: { name: 'kwok-provider-templates' } }),
  });
  await cm('kwok-provider-templates', { templates: stringify({ apiVersion: 'v1', kind: 'List', items: zones.map(template) }) });
  const bin = join(execFileSync('bash', [UNPACK], { encoding: 'utf8' }).trim(), 'cluster-autoscaler');
  const args = [
    `--kubeconfig=${cp.kubeconfig}`, '--cloud-provider=kwok', '--namespace=kube-system', '--scan-interval=2s',
    '--scale-down-enabled=false', '--leader-elect=false', '--expander=random', `--address=127.0.0.1:${await freePort()}`, '--v=2',
  ];
  const env = { ...process.env, POD_NAMESPACE: 'kube-system', KWOK_PROVIDER_MODE: 'local', KUBECONFIG: cp.kubeconfig };
  cp.start('cluster-autoscaler', bin, args, env);
  const stopKubelet = kubeletOfNewNodes(kube, GROUP_LABEL);
  for (const z of replicas()) {
    await eventually('zonekeeper finds the Cluster Autoscaler', async () =>
      (await (await fetch(`${z.admin}/debug/cache`)).json() as Obj).clusterAutoscaler === 'kube-system/cluster-autoscaler-status', 120_000, 1000);
  }
  return {
    revive() {
      const ended = cp.processState('cluster-autoscaler')?.ended;
      if (!ended || ended.includes('SIGKILL')) return undefined;
      cp.start('cluster-autoscaler', bin, args, env);
      return ended;
    },
    stop: stopKubelet,
  };
}

/** The workload that grows: a gated StatefulSet of the pool, each pod a whole node, no zones written by hand. */
export function grownStatefulSet(namespace: string, name: string, replicas: number): Obj {
  return pooledStatefulSet(namespace, name, POOL, replicas, { tolerations: [{ key: TAINT.key, operator: 'Equal', value: TAINT.value, effect: TAINT.effect }] });
}
