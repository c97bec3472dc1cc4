// A real Karpenter (v1.13, kwok provider; ../shared/karpenter) as the e2e and the robustness run
// start it: its CRDs and node class, a NodePool per pool, the controller against the control plane.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, type ControlPlane } from './controlPlane.js';
import type { Kube, Obj } from './kube.js';
import { ZONE } from './autoscaling.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const KARPENTER = join(process.env.KUBE_SHARED ?? join(ROOT, '../shared'), 'karpenter');
export const KARPENTER_UNPACK = join(KARPENTER, 'unpack.sh');

/** The oldest Kubernetes minor the tests run Karpenter v1.13 on (its client is 1.35's). */
export const KARPENTER_MIN_MINOR = 34;

/** Whether the Karpenter build is here to be unpacked. */
export const karpenterUnpacked = () => existsSync(KARPENTER_UNPACK);

/** A NodePool for pool `pool` (its nodes labelled so, and tainted `taints`) offering `zones`, of 4-CPU on-demand nodes only. */
export function nodePool(pool: string, zones: string[], taints: Obj[] = []): Obj {
  return {
    apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: pool },
    spec: {
      template: {
        metadata: { labels: { pool } },
        spec: {
          requirements: [
            { key: ZONE, operator: 'In', values: zones },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['medium-4cpu'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
          expireAfter: 'Never',
          ...(taints.length > 0 ? { taints } : {}),
        },
      },
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
    },
  };
}

/** Karpenter's CRDs, Established, and the one KWOKNodeClass every NodePool names. */
export async function installKarpenter(cp: ControlPlane, kube: Kube): Promise<void> {
  cp.kubectl(['apply', '-f', join(KARPENTER, 'crds')]);
  cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/nodepools.karpenter.sh', 'crd/nodeclaims.karpenter.sh', 'crd/kwoknodeclasses.karpenter.kwok.sh']);
  await kube.create({ apiVersion: 'karpenter.kwok.sh/v1alpha1', kind: 'KWOKNodeClass', metadata: { name: 'default' }, spec: {} });
}

/** Starts the controller (process `karpenter`); returns how to start it again with the same settings. */
export async function startKarpenter(cp: ControlPlane): Promise<() => void> {
  const bin = execFileSync('bash', [KARPENTER_UNPACK], { encoding: 'utf8' }).trim();
  const env = {
    ...process.env, KUBECONFIG: cp.kubeconfig, DISABLE_LEADER_ELECTION: 'true', LOG_LEVEL: 'debug',
    METRICS_PORT: String(await freePort()), HEALTH_PROBE_PORT: String(await freePort()),
    INSTANCE_TYPES_FILE_PATH: join(KARPENTER, 'examples/instance-types.json'), BATCH_IDLE_DURATION: '1s', BATCH_MAX_DURATION: '3s',
  };
  const start = () => { cp.start('karpenter', join(bin, 'karpenter'), [], env); };
  start();
  return start;
}
