// The Cluster Autoscaler in a robustness run (1.34 and later, where it runs; docs/operations.md#robustness-runs):
// its kwok provider with an empty node group of a tainted pool `grow` in every zone of the run,
// and a gated StatefulSet of that pool, so that every seat is a zone with no node to grow into.
import { CA_UNPACK, CA_UNPACKED, GROUP_LABEL, kubeletOfNewNodes, nodeGroupTemplate, pooledStatefulSet, startClusterAutoscaler } from '../e2e/autoscaling.js';
import type { ControlPlane, Zonekeeper } from '../e2e/controlPlane.js';
import { eventually, type Kube, type Obj } from '../e2e/kube.js';

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
  if (!CA_UNPACKED) return `no ${CA_UNPACK}`;
  return undefined;
}

/** Starts the autoscaler and the kubelets of the nodes it adds; resolves once every replica has found it (its status ConfigMap). */
export async function startAutoscaler(cp: ControlPlane, kube: Kube, zones: readonly string[], replicas: () => Zonekeeper[]): Promise<RunAutoscaler> {
  // An empty node group (min 0, max 6) of the pool in every zone, tainted so that no other workload lands there.
  const autoscaler = await startClusterAutoscaler(cp, kube, zones.map((z) => nodeGroupTemplate(POOL, z, { taints: [TAINT] })), ['--scale-down-enabled=false']);
  const stopKubelet = kubeletOfNewNodes(kube, GROUP_LABEL);
  for (const z of replicas()) {
    await eventually('zonekeeper finds the Cluster Autoscaler', async () =>
      (await (await fetch(`${z.admin}/debug/cache`)).json() as Obj).clusterAutoscaler === 'kube-system/cluster-autoscaler-status', 120_000, 1000);
  }
  return {
    revive() {
      const ended = cp.processState('cluster-autoscaler')?.ended;
      if (!ended || ended.includes('SIGKILL')) return undefined;
      autoscaler.start();
      return ended;
    },
    stop: stopKubelet,
  };
}

/** The workload that grows: a gated StatefulSet of the pool, each pod a whole node, no zones written by hand. */
export function grownStatefulSet(namespace: string, name: string, replicas: number): Obj {
  return pooledStatefulSet(namespace, name, POOL, replicas, { tolerations: [{ key: TAINT.key, operator: 'Equal', value: TAINT.value, effect: TAINT.effect }] });
}
