// zonekeeper's WorkloadSpread CRD in the e2e: as shipped (v1beta1 stored, v1alpha1 served, converted
// by zonekeeper's /convert), called by URL since zonekeeper runs beside the control plane; or, for
// a suite that runs no admission listener, as zonekeeper shipped it before v1beta1 (v1alpha1 alone).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { eventually, type Kube, type Obj } from './kube.js';

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
