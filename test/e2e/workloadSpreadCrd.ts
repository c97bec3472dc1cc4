// zonekeeper's WorkloadSpread CRD in the e2e: as shipped (v1beta1 stored, v1alpha1 served, converted
// by zonekeeper's /convert), called by URL since zonekeeper runs beside the control plane; or, for
// a suite that runs no admission listener, as zonekeeper shipped it before v1beta1 (v1alpha1 alone).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { admissionConfig, admissionReady, webhookConfiguration } from './admissionWebhook.js';
import type { ControlPlane } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';

export const WORKLOADSPREAD_CRD = 'workloadspreads.apps.kruise.io';

const shipped = (): Obj => parseAllDocuments(readFileSync(new URL('../../manifests/workloadspread-crd/50-workloadspread-crd.yaml', import.meta.url), 'utf8'))[0]!.toJS();

/** The CRD converting through zonekeeper's admission listener on 127.0.0.1:`port` (its caBundle written by zonekeeper). */
export function workloadSpreadCrd(port: number): Obj {
  const crd = shipped();
  crd.spec.conversion.webhook.clientConfig = { url: `https://127.0.0.1:${port}/convert` };
  return crd;
}

/** The v1alpha1-only CRD (no conversion): what an older zonekeeper shipped, and a suite without a listener uses. */
export function v1alpha1WorkloadSpreadCrd(): Obj {
  const crd = shipped();
  const { conversion: _, ...spec } = crd.spec;
  return { ...crd, spec: { ...spec, versions: crd.spec.versions.filter((v: Obj) => v.name === 'v1alpha1').map((v: Obj) => ({ ...v, storage: true })) } };
}

/** zonekeeper wrote its CA into the CRD's conversion webhook: from then on the API server converts through it. */
export async function conversionReady(kube: Kube): Promise<void> {
  await eventually('zonekeeper wrote the CRD\'s conversion caBundle', async () =>
    !!(await kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, WORKLOADSPREAD_CRD))?.spec?.conversion?.webhook?.clientConfig?.caBundle, 60_000, 250);
}

const OVERLAY = new URL('../../manifests/overlays/managed', import.meta.url).pathname;
const CRD_DIR = new URL('../../manifests/workloadspread-crd', import.meta.url).pathname;
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/**
 * Kruise's e2e cluster on zonekeeper's standalone mode: zonekeeper as the managed overlay's ServiceAccount with that
 * overlay's RBAC (WorkloadSpread status included), worker 0 in zone-a and workers 1 and 2 in zone-b, the shipped CRD
 * converting through zonekeeper, and admission on the namespace `ns`.
 */
export async function standaloneWorkloadSpreads(cp: ControlPlane, ns: string, extra: Obj = {}): Promise<Kube> {
  const { port, admission } = await admissionConfig('zonekeeper-system/zonekeeper-webhook-tls');
  admission.certificate.conversionCrd = WORKLOADSPREAD_CRD;
  const config = {
    admission, gate: { intervalSeconds: 1 }, leaderElection: { namespace: 'zonekeeper-system' },
    workloadSpread: { writeStatus: true, statusIntervalSeconds: 1 }, deletionCost: { enabled: true, intervalSeconds: 1 }, ...extra,
  };
  await cp.up([{ name: 'default-scheduler', extender: false }], config);
  const kube = new Kube(cp.api);
  const rbac = [OVERLAY, CRD_DIR].flatMap((dir) => parseAllDocuments(cp.kubectl(['kustomize', dir])).map((d) => d.toJS()).filter((o) => o && RBAC_KINDS.has(o.kind)));
  await cp.restartZonekeeperAs(rbac, config);
  await kube.addNode('worker-0', 'zone-a');
  await kube.addNode('worker-1', 'zone-b');
  await kube.addNode('worker-2', 'zone-b');
  await kube.create(workloadSpreadCrd(port));
  cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${WORKLOADSPREAD_CRD}`]);
  await kube.create(webhookConfiguration(port));
  await conversionReady(kube);
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'zonekeeper.io/admission': 'enabled' } } });
  await admissionReady(kube, cp.zonekeeper!.admin);
  return kube;
}
