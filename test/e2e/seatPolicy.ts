// The policy transport in the e2e (docs/design.md#the-policy, Kubernetes 1.36+): the shipped
// MutatingAdmissionPolicy applied as a user would, the webhook scoped by the managed overlay's
// matchConditions, and probes of the seat table zonekeeper publishes and of the policy itself.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from './controlPlane.js';
import { eventually, pathOf, type Kube, type Obj } from './kube.js';

/** The mark the policy writes on each pod it decided. */
export const DECIDED_BY = 'zonekeeper.io/decided-by';

const manifest = (path: string): Obj[] =>
  parseAllDocuments(readFileSync(new URL(`../../manifests/${path}`, import.meta.url), 'utf8')).map((d) => d.toJS()).filter(Boolean);

/** The managed overlay's webhook, as shipped. */
export const shippedWebhook = (): Obj => manifest('overlays/managed/admission.yaml').find((o) => o.kind === 'MutatingWebhookConfiguration')!.webhooks[0];

/**
 * The managed overlay's scope on a test's webhook: its matchConditions, and its objectSelector's
 * expressions (a pod the policy labelled is not sent) beside the test's own.
 */
export function shippedScope(webhook: Obj): void {
  const shipped = shippedWebhook();
  webhook.matchConditions = shipped.matchConditions;
  const own: Obj[] = webhook.objectSelector?.matchExpressions ?? [];
  webhook.objectSelector = { ...webhook.objectSelector, matchExpressions: [...own, ...shipped.objectSelector.matchExpressions] };
}

/** The policy and its binding as shipped, applied with kubectl. */
export function applySeatPolicy(cp: ControlPlane): void {
  cp.kubectl(['apply', '-f', new URL('../../manifests/components/policy/policy.yaml', import.meta.url).pathname]);
}

/** A namespace's seat table (ConfigMap zonekeeper-seats); none yet: empty. */
export async function seatTable(kube: Kube, namespace: string): Promise<Record<string, string>> {
  return (await kube.call('GET', pathOf('v1', 'ConfigMap', namespace, 'zonekeeper-seats')).catch(() => ({ data: {} }))).data ?? {};
}

/** Until kube-apiserver applies the policy with the table's entry: a dry-run create of the StatefulSet's pod `ordinal` comes back marked. */
export function policyApplies(kube: Kube, sts: Obj, ordinal: number): Promise<Obj> {
  const { name, namespace, uid } = sts.metadata;
  return eventually(`the policy marks a dry-run pod of ${name}`, async () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: `${name}-${ordinal}`, namespace, labels: { 'apps.kubernetes.io/pod-index': String(ordinal), 'statefulset.kubernetes.io/pod-name': `${name}-${ordinal}` },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid, controller: true }],
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const res = await kube.call('POST', `${pathOf('v1', 'Pod', namespace)}?dryRun=All`, pod);
    return res.metadata.labels?.[DECIDED_BY] === 'policy' ? res : undefined;
  }, 60_000, 500);
}

/**
 * Until a StatefulSet with a frozen round-robin list is seated: its entry in its namespace's table,
 * and kube-apiserver writing it (a dry-run create of its pod `ordinal` comes back marked, in the
 * zone of that ordinal).
 */
export async function seated(kube: Kube, sts: Obj, zones: string[], ordinal: number): Promise<void> {
  const { name, namespace, uid } = sts.metadata;
  await eventually(`the seat table holds ${name}`, async () => (await seatTable(kube, namespace))[uid] === `rr;topology.kubernetes.io/zone;0;${zones.join(',')}`, 60_000, 250);
  const pod = await policyApplies(kube, sts, ordinal);
  if (pod.spec.nodeSelector?.['topology.kubernetes.io/zone'] !== zones[ordinal % zones.length]) {
    throw new Error(`the policy wrote ${JSON.stringify(pod.spec.nodeSelector)} for ${name}-${ordinal}, not ${zones[ordinal % zones.length]}`);
  }
}

/** The sum of a metric's lines on one replica's /metrics whose labels include `labels`; absent: 0. */
export async function metricSum(admin: string, name: string, labels = ''): Promise<number> {
  return (await (await fetch(`${admin}/metrics`)).text()).split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

/** Every admission review zonekeeper answered, whatever the outcome. */
export const admissionReviews = (admin: string): Promise<number> => metricSum(admin, 'zonekeeper_decisions_total', 'verb="admission"');
