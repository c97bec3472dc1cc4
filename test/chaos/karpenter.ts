// Karpenter in a robustness run (docs/operations.md#robustness-runs), 1.34 and later: a
// NodePool `kp` of tainted 4-CPU nodes in zones a, b and c, and through the gate a StatefulSet of
// that pool opted in to the zone disruption budget, each pod a node (a NodeClaim) of its own.
import { kubeletOfNewNodes, pooledStatefulSet } from '../e2e/autoscaling.js';
import type { ControlPlane } from '../e2e/controlPlane.js';
import { installKarpenter, KARPENTER_MIN_MINOR, KARPENTER_UNPACK, karpenterUnpacked, nodePool, startKarpenter } from '../e2e/karpenter.js';
import type { Kube, Obj } from '../e2e/kube.js';

const KARPENTER_POOL = 'kp';
const TAINT = { key: 'dedicated', value: KARPENTER_POOL, effect: 'NoSchedule' };

export interface RunKarpenter {
  /** Starts it again if it ended by itself; returns how it ended, if it did. */
  revive(): string | undefined;
  stop(): Promise<void>;
}

/** Why the run has no Karpenter on this control plane, or undefined: it can have one. */
export function noKarpenter(cp: ControlPlane): string | undefined {
  // On 1.30.14 it provisioned nodes and drained a bare pod, but a run there showed no eviction of the pods of the NodeClaims it deleted (not understood).
  if (cp.minor < KARPENTER_MIN_MINOR) return `Karpenter v1.13 is run on Kubernetes 1.${KARPENTER_MIN_MINOR}+ (on 1.30.14 a run saw no eviction of its pods)`;
  if (!karpenterUnpacked()) return `no ${KARPENTER_UNPACK}`;
  return undefined;
}

/** Karpenter with the NodePool, and the kubelets of the nodes it adds. */
export async function startRunKarpenter(cp: ControlPlane, kube: Kube, zones: string[]): Promise<RunKarpenter> {
  await installKarpenter(cp, kube);
  await kube.create(nodePool(KARPENTER_POOL, zones, [TAINT]));
  const start = await startKarpenter(cp);
  const stopKubelet = kubeletOfNewNodes(kube, `karpenter.sh/nodepool=${KARPENTER_POOL}`);
  return {
    revive() {
      const ended = cp.processState('karpenter')?.ended;
      if (!ended || ended.includes('SIGKILL')) return undefined;
      start();
      return ended;
    },
    stop: stopKubelet,
  };
}

/** The workload on it: gated, every pod a node of the pool, its evictions a zone at a time. */
export function karpenterStatefulSet(namespace: string, name: string, replicas: number): Obj {
  const sts = pooledStatefulSet(namespace, name, KARPENTER_POOL, replicas, { tolerations: [{ key: TAINT.key, operator: 'Equal', value: TAINT.value, effect: TAINT.effect }] });
  sts.metadata.annotations = { 'zonekeeper.io/zone-disruption-budget': 'zone' };
  return sts;
}

/** The NodeClaims of the pool not being deleted, each with its node and the node's zone, once it has a node. */
export async function poolClaims(kube: Kube): Promise<{ name: string; node: string; zone: string }[]> {
  const selector = `karpenter.sh/nodepool=${KARPENTER_POOL}`;
  const zones = new Map((await kube.list('v1', 'Node', undefined, selector)).map((n) => [n.metadata.name as string, n.metadata.labels?.['topology.kubernetes.io/zone'] as string]));
  const claims = (await kube.call('GET', `/apis/karpenter.sh/v1/nodeclaims?labelSelector=${encodeURIComponent(selector)}`)).items as Obj[];
  return claims.filter((c) => !c.metadata.deletionTimestamp && zones.get(c.status?.nodeName))
    .map((c) => ({ name: c.metadata.name, node: c.status.nodeName, zone: zones.get(c.status.nodeName)! }));
}
