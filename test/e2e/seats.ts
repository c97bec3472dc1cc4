// The policy transport in the e2e (docs/design.md#the-policy): what a test needs to wait until
// kube-apiserver writes a StatefulSet's seats, and to count the reviews zonekeeper's webhook answered.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { eventually, type Kube, pathOf, type Obj } from './kube.js';

export const ZONE_KEY = 'topology.kubernetes.io/zone';
/** The annotation the policy writes into each pod it decided. */
export const POLICY_MARK = 'zonekeeper.io/decided-by';
/** The seat table zonekeeper publishes in each namespace, the policy's param. */
export const SEAT_TABLE = 'zonekeeper-seats';

/** The shipped policy and its binding (1.36+). */
export const POLICY_MANIFEST = new URL('../../manifests/components/policy/policy.yaml', import.meta.url).pathname;

/** The managed overlay's webhook matchConditions as shipped: a pod the policy marked is not sent to zonekeeper. */
export function shippedMatchConditions(): Obj[] {
  const docs = parseAllDocuments(readFileSync(new URL('../../manifests/overlays/managed/admission.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
  return docs.find((o) => o?.kind === 'MutatingWebhookConfiguration').webhooks[0].matchConditions;
}

/** Every admission review zonekeeper answered, whatever the outcome, from its /metrics text. */
export function admissionReviews(metrics: string): number {
  return metrics.split('\n').filter((l) => l.startsWith('zonekeeper_decisions_total{') && l.includes('verb="admission"'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

/**
 * Until a StatefulSet with a frozen round-robin list (replicas 0) is seated: its entry in its
 * namespace's table, and kube-apiserver applying it (a dry-run create of its pod `ordinal` comes
 * back marked by the policy, in the zone of that ordinal).
 */
export async function seated(kube: Kube, sts: Obj, zones: string[], ordinal: number, timeoutMs = 60_000): Promise<void> {
  const { name, namespace, uid } = sts.metadata;
  await eventually(`the seat table holds ${name}`, async () => {
    const table = await kube.call('GET', pathOf('v1', 'ConfigMap', namespace, SEAT_TABLE)).catch(() => ({ data: {} }));
    return table.data?.[uid] === `rr;${ZONE_KEY};0;${zones.join(',')}`;
  }, timeoutMs, 250);
  await eventually(`the policy marks a dry-run pod of ${name}`, async () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: `${name}-${ordinal}`, namespace, labels: { 'apps.kubernetes.io/pod-index': String(ordinal) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid, controller: true }],
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const res = await kube.call('POST', `${pathOf('v1', 'Pod', namespace)}?dryRun=All`, pod);
    return res.metadata.annotations?.[POLICY_MARK] === 'policy' && res.spec.nodeSelector?.[ZONE_KEY] === zones[ordinal % zones.length];
  }, timeoutMs, 500);
}
