import type { Logger } from 'pino';
import { renewalDue, renewed, type ServingNames, type WebhookPki } from './webhookPki.js';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WorkResult } from '../common/workQueue.js';
import { reconciler } from '../common/reconciler.js';

// The admission webhook's certificate, kept by zonekeeper (docs/operations.md#the-admission-certificate):
// the Lease holder issues and renews a CA and a serving certificate in one Secret and writes the
// CA into its MutatingWebhookConfiguration's caBundle (and a CRD's conversion webhook's); every replica serves what the Secret holds.

export interface CertificateOptions {
  secret: { namespace: string; name: string };
  /** The MutatingWebhookConfiguration whose webhooks get the caBundle; '' = none (cert-manager's injector, or by hand). */
  webhookConfiguration: string;
  /** The eviction gate's ValidatingWebhookConfiguration, served by the same listener; '' = none. */
  evictionWebhookConfiguration?: string;
  /** A CRD whose conversion webhook this listener serves (zonekeeper's WorkloadSpread CRD); '' = none. */
  conversionCrd?: string;
  names: ServingNames;
  validityDays: number;
  renewBeforeDays: number;
  checkIntervalSeconds: number;
}

/** While a replica serves no certificate yet, it reads the Secret this often. */
const UNTIL_LOADED_MS = 2000;
const KEY = 'certificate';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString() : undefined);

export function webhookCertificate(api: ApiClient, opts: CertificateOptions, serve: (cert: string, key: string) => void, log: Logger, metrics: Metrics,
  clock: Timers = systemClock) {
  const { namespace, name } = opts.secret;
  const secretPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const configurations = [
    { kind: 'MutatingWebhookConfiguration', name: opts.webhookConfiguration, plural: 'mutatingwebhookconfigurations' },
    { kind: 'ValidatingWebhookConfiguration', name: opts.evictionWebhookConfiguration ?? '', plural: 'validatingwebhookconfigurations' },
  ].filter((c) => c.name);
  let served = '';

  /** What the Secret holds; nothing (and no resourceVersion) while it does not exist. */
  async function read(): Promise<{ pki: Partial<WebhookPki>; resourceVersion?: string }> {
    const res = await api.request('GET', `${secretPath}/${encodeURIComponent(name)}`, { timeoutMs: 10_000 });
    if (res.status === 404) return { pki: {} };
    if (res.status !== 200) throw new Error(`GET secret ${namespace}/${name}: ${res.status} ${statusMessage(res.body)}`);
    const o = JSON.parse(res.body);
    const d = o.data ?? {};
    return { pki: { caBundle: unb64(d['ca.crt']), caKey: unb64(d['ca.key']), cert: unb64(d['tls.crt']), key: unb64(d['tls.key']) }, resourceVersion: o.metadata?.resourceVersion };
  }

  function use(pki: Partial<WebhookPki>): void {
    if (!pki.cert || !pki.key || pki.cert === served) return;
    serve(pki.cert, pki.key);
    served = pki.cert;
    log.info({ secret: `${namespace}/${name}` }, 'admission: serving the certificate from its Secret');
  }

  /** The Lease holder: the Secret renewed when due, the caBundle written, both conditional on what was read. */
  async function reconcile(): Promise<void> {
    const now = clock.now();
    const current = await read();
    let pki = current.pki;
    const due = renewalDue(pki, opts.names, now, opts.renewBeforeDays);
    if (due) {
      pki = renewed(pki, due.what, opts.names, now, opts.validityDays);
      const body = {
        apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
        metadata: { name, namespace, ...(current.resourceVersion ? { resourceVersion: current.resourceVersion } : {}), labels: { 'app.kubernetes.io/managed-by': 'zonekeeper' } },
        data: { 'ca.crt': b64(pki.caBundle!), 'ca.key': b64(pki.caKey!), 'tls.crt': b64(pki.cert!), 'tls.key': b64(pki.key!) },
      };
      const res = current.resourceVersion
        ? await api.request('PUT', `${secretPath}/${encodeURIComponent(name)}`, { body: JSON.stringify(body), timeoutMs: 10_000 })
        : await api.request('POST', secretPath, { body: JSON.stringify(body), timeoutMs: 10_000 });
      const ok = res.status === 200 || res.status === 201;
      metrics.actuatorWrites.inc({ action: 'webhook-certificate', result: ok ? 'ok' : res.status === 409 ? 'conflict' : 'error' });
      // 409: another writer got there first (a hand-over): read again.
      if (!ok) throw new Error(`writing secret ${namespace}/${name}: ${res.status} ${statusMessage(res.body)}`);
      log.info({ secret: `${namespace}/${name}`, renewed: due.what, why: due.why }, 'admission: certificate issued');
    }
    use(pki);
    if (pki.caBundle) for (const c of configurations) await writeCaBundle(c, b64(pki.caBundle));
    if (pki.caBundle && opts.conversionCrd) await writeCrdCaBundle(opts.conversionCrd, b64(pki.caBundle));
  }

  // What the CRD was found as, said once per change (the check runs every checkIntervalSeconds).
  let crdState = '';
  const crdSaid = (state: string, say: () => void) => {
    if (state !== crdState) say();
    crdState = state;
  };

  /** The CRD's spec.conversion.webhook.clientConfig.caBundle, when its conversion is a webhook. */
  async function writeCrdCaBundle(crd: string, caBundle: string): Promise<void> {
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crd)}`;
    const res = await api.request('GET', crdPath, { timeoutMs: 10_000 });
    if (res.status === 404) {
      crdSaid('absent', () => log.warn({ crd }, 'admission: CustomResourceDefinition not found; its conversion caBundle is written once it exists'));
      return;
    }
    if (res.status !== 200) throw new Error(`GET CustomResourceDefinition ${crd}: ${res.status} ${statusMessage(res.body)}`);
    const o = JSON.parse(res.body);
    const conversion = o.spec?.conversion;
    if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) {
      crdSaid('no-webhook', () => log.warn({ crd, strategy: conversion?.strategy ?? 'None' }, 'admission: the CustomResourceDefinition converts without a webhook; no caBundle written'));
      return;
    }
    crdSaid('webhook', () => {});
    if (conversion.webhook.clientConfig.caBundle === caBundle) return;
    const patch = [{ op: 'test', path: '/metadata/resourceVersion', value: o.metadata?.resourceVersion },
      { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle }];
    const put = await api.request('PATCH', crdPath, { body: JSON.stringify(patch), contentType: 'application/json-patch+json', timeoutMs: 10_000 });
    metrics.actuatorWrites.inc({ action: 'webhook-cabundle', result: put.status === 200 ? 'ok' : 'error' });
    if (put.status !== 200) throw new Error(`writing the conversion caBundle of CustomResourceDefinition ${crd}: ${put.status} ${statusMessage(put.body)}`);
    log.info({ crd }, 'admission: conversion caBundle written');
  }

  async function writeCaBundle(c: (typeof configurations)[number], caBundle: string): Promise<void> {
    const webhookPath = `/apis/admissionregistration.k8s.io/v1/${c.plural}/${encodeURIComponent(c.name)}`;
    const res = await api.request('GET', webhookPath, { timeoutMs: 10_000 });
    if (res.status === 404) {
      log.warn({ webhookConfiguration: c.name }, `admission: ${c.kind} not found; its caBundle is written once it exists`);
      return;
    }
    if (res.status !== 200) throw new Error(`GET ${c.kind} ${c.name}: ${res.status} ${statusMessage(res.body)}`);
    const o = JSON.parse(res.body);
    const webhooks: unknown[] = Array.isArray(o.webhooks) ? o.webhooks : [];
    const ops = webhooks.flatMap((w: any, i) => (w?.clientConfig?.caBundle === caBundle ? [] : [{ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }]));
    if (ops.length === 0) return;
    const patch = [{ op: 'test', path: '/metadata/resourceVersion', value: o.metadata?.resourceVersion }, ...ops];
    const put = await api.request('PATCH', webhookPath, { body: JSON.stringify(patch), contentType: 'application/json-patch+json', timeoutMs: 10_000 });
    metrics.actuatorWrites.inc({ action: 'webhook-cabundle', result: put.status === 200 ? 'ok' : 'error' });
    if (put.status !== 200) throw new Error(`writing the caBundle of ${c.kind} ${c.name}: ${put.status} ${statusMessage(put.body)}`);
    log.info({ webhookConfiguration: c.name, kind: c.kind, webhooks: ops.length }, 'admission: caBundle written');
  }

  /** Every replica: what the Secret holds is served, read again at every resync (every UNTIL_LOADED_MS while nothing is served). */
  async function load(): Promise<WorkResult> {
    try {
      use((await read()).pki);
    } catch (err) {
      log.warn({ secret: `${namespace}/${name}`, err: (err as Error).message }, 'admission: certificate Secret not read');
    }
    return served ? undefined : { againAfterMs: UNTIL_LOADED_MS };
  }

  const loader = reconciler({ keys: () => [KEY], reconcile: load, resyncMs: opts.checkIntervalSeconds * 1000, ready: () => true, clock });

  const keeper = reconciler({
    keys: () => [KEY], reconcile, resyncMs: opts.checkIntervalSeconds * 1000, ready: () => true, clock, retryBaseMs: 500, retryMaxMs: 30_000,
    onError: (_key, err) => log.warn({ secret: `${namespace}/${name}`, err: err.message }, 'admission: certificate not kept'),
  });

  return {
    /** The Lease holder's part (a leader controller). */
    keeper: keeper.controller(),
    /** Every replica's part: serve what the Secret holds. */
    startLoading: () => loader.start(),
    stopLoading: () => loader.stop(),
  };
}
