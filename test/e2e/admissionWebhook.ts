// zonekeeper's admission webhook in the e2e: its configuration (a certificate zonekeeper keeps,
// for 127.0.0.1) and the MutatingWebhookConfiguration that calls it by URL, as
// manifests/overlays/managed declares it but without a Service (zonekeeper runs beside the
// control plane, not in a pod).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { freePort, type ControlPlane } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';

export const ADMISSION_LABEL = 'zonekeeper.io/admission';
const WEBHOOK = 'zonekeeper';

/** zonekeeper's admission options: a listener on a free port, its certificate kept in `secret` (namespace/name). */
export async function admissionConfig(secret = 'default/zonekeeper-webhook-tls'): Promise<{ port: number; admission: Obj }> {
  const port = await freePort();
  // Only the local kube-apiserver reaches 127.0.0.1 here: callers taken as it (docs/security.md#who-may-call-the-webhooks).
  return { port, admission: { listen: `127.0.0.1:${port}`, trustNetwork: true, certificate: { secret, webhookConfiguration: WEBHOOK, ipAddresses: ['127.0.0.1'], checkIntervalSeconds: 1 } } };
}

/** The webhook for pod CREATE, no caBundle (zonekeeper writes it); scoped by `selector` (a namespaceSelector by default). */
export function webhookConfiguration(port: number, selector: Obj = { namespaceSelector: { matchLabels: { [ADMISSION_LABEL]: 'enabled' } } }): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: WEBHOOK },
    webhooks: [{
      name: 'pods.zonekeeper.io', admissionReviewVersions: ['v1'], sideEffects: 'NoneOnDryRun', failurePolicy: 'Fail', timeoutSeconds: 5,
      clientConfig: { url: `https://127.0.0.1:${port}/admission/pods` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
      // Only pods a controller owns: a bare pod, a static pod, a DaemonSet's never wait on zonekeeper.
      matchConditions: [{ name: 'controller-owned', expression: "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind != 'DaemonSet')" }],
      ...selector,
    }],
  };
}

export const EVICTION_WEBHOOK = 'zonekeeper-evictions';
export const EVICTIONS_LABEL = 'zonekeeper.io/evictions';

/** The component's webhook conditions: break-glass, and zonekeeper's own ServiceAccount never sent back to it. */
const EVICTION_MATCH_CONDITIONS = parseAllDocuments(readFileSync(new URL('../../manifests/components/zone-disruption/webhook.yaml', import.meta.url), 'utf8'))
  .map((d) => d.toJS()).find((o) => o?.kind === 'ValidatingWebhookConfiguration').webhooks[0].matchConditions as Obj[];

/** The eviction gate's webhook for pods/eviction, by URL, failing closed, as manifests/components/zone-disruption declares it. */
export function evictionWebhookConfiguration(port: number): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: EVICTION_WEBHOOK },
    webhooks: [{
      name: 'evictions.zonekeeper.io', admissionReviewVersions: ['v1'], sideEffects: 'NoneOnDryRun', failurePolicy: 'Fail', timeoutSeconds: 10,
      clientConfig: { url: `https://127.0.0.1:${port}/admission/evictions` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { [EVICTIONS_LABEL]: 'enabled' } },
      matchConditions: EVICTION_MATCH_CONDITIONS,
    }],
  };
}

/** The webhook's caBundle as zonekeeper wrote it, or undefined. */
export async function caBundle(kube: Kube): Promise<string | undefined> {
  return (await kube.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, WEBHOOK))?.webhooks[0].clientConfig.caBundle;
}

/** Until then a replica leaves every decision to the keeper (the gate), and the API server trusts no certificate of it. */
export async function admissionReady(kube: Kube, admin: string): Promise<void> {
  await eventually('zonekeeper holds the Lease and wrote the caBundle', async () =>
    /^zonekeeper_leader 1$/m.test(await (await fetch(`${admin}/metrics`)).text()) && !!(await caBundle(kube)), 60_000, 250);
}

const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** What the managed overlay with `component` grants zonekeeper, for `restartZonekeeperAs`. */
export function managedRbac(cp: ControlPlane, component: string): Obj[] {
  return managedWith(cp, component).objects.filter((o) => RBAC_KINDS.has(o.kind));
}

/** The managed overlay with `component` (a folder of manifests/components), as a user adds it: its objects, built by kubectl. */
export function managedWith(cp: ControlPlane, component: string): { dir: string; objects: any[] } {
  const dir = join(cp.dir, `${component}-overlay`);
  mkdirSync(dir, { recursive: true });
  const manifests = (d: string) => relative(dir, new URL(`../../manifests/${d}`, import.meta.url).pathname);
  writeFileSync(join(dir, 'kustomization.yaml'), stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [manifests('overlays/managed')], components: [manifests(`components/${component}`)],
  }));
  return { dir, objects: parseAllDocuments(cp.kubectl(['kustomize', dir])).map((d) => d.toJS()) };
}
