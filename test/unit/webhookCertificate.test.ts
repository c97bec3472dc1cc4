// The admission certificate's keeper and loader (src/controllers/webhookCertificate.ts) on fake
// time against an API in memory: issued when missing, renewed when due (found by the resync),
// a refused write retried after the queue's backoff, and every replica serving what the Secret holds.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { renewed } from '../../src/controllers/webhookPki.js';
import { fakeClock } from '../../src/common/clock.js';
import { webhookCertificate, type CertificateOptions } from '../../src/controllers/webhookCertificate.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { recordingApi, type RecordedRequest } from '../support/recordingApi.js';

const DAY = 86_400_000;
const START = Date.parse('2026-11-25T00:00:00Z');
const SECRET = '/api/v1/namespaces/zk/secrets';
const WEBHOOK = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/zonekeeper';
const OPTS: CertificateOptions = {
  secret: { namespace: 'zk', name: 'webhook-tls' }, webhookConfiguration: 'zonekeeper', names: { dnsNames: ['zonekeeper.zk.svc'], ipAddresses: [] },
  validityDays: 10, renewBeforeDays: 3, checkIntervalSeconds: 3600,
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloadspreads.apps.kruise.io';
const crdWith = (conversion: object) => ({ metadata: { name: 'workloadspreads.apps.kruise.io', resourceVersion: '1' }, spec: { conversion } });

/** A Secret and a MutatingWebhookConfiguration kept in memory, with resourceVersions; `refuse` answers the next writes with these statuses. */
function apiServer(refuse: number[] = []) {
  let rv = 1;
  const state: { secret?: any; webhook: any; crd?: any } = { webhook: { metadata: { resourceVersion: '1' }, webhooks: [{ name: 'pods.zonekeeper.io', clientConfig: {} }] } };
  const answer = (r: RecordedRequest): { status: number; body?: unknown } => {
    const write = r.method !== 'GET';
    if (write && refuse.length > 0) return { status: refuse.shift()!, body: { message: 'refused' } };
    if (r.path === `${SECRET}/webhook-tls` && r.method === 'GET') return state.secret ? { status: 200, body: state.secret } : { status: 404 };
    if (r.path === SECRET && r.method === 'POST') {
      state.secret = { ...r.body, metadata: { ...r.body.metadata, resourceVersion: String(++rv) } };
      return { status: 201, body: state.secret };
    }
    if (r.path === `${SECRET}/webhook-tls` && r.method === 'PUT') {
      if (r.body.metadata.resourceVersion !== state.secret?.metadata.resourceVersion) return { status: 409 };
      state.secret = { ...r.body, metadata: { ...r.body.metadata, resourceVersion: String(++rv) } };
      return { status: 200, body: state.secret };
    }
    if (r.path === CRD && r.method === 'GET') return state.crd ? { status: 200, body: state.crd } : { status: 404 };
    if (r.path === CRD && r.method === 'PATCH') {
      if (r.body[0].value !== state.crd.metadata.resourceVersion) return { status: 422 };
      state.crd.spec.conversion.webhook.clientConfig.caBundle = r.body[1].value;
      state.crd.metadata.resourceVersion = String(++rv);
      return { status: 200, body: state.crd };
    }
    if (r.path === WEBHOOK && r.method === 'GET') return { status: 200, body: state.webhook };
    if (r.path === WEBHOOK && r.method === 'PATCH') {
      for (const op of r.body.slice(1)) state.webhook.webhooks[Number(op.path.split('/')[2])].clientConfig.caBundle = op.value;
      state.webhook.metadata.resourceVersion = String(++rv);
      return { status: 200, body: state.webhook };
    }
    return { status: 404 };
  };
  const api = recordingApi(answer);
  const sent = (method: string, path: string) => api.requests.filter((r) => r.method === method && r.path === path).length;
  return { api, state, sent };
}

function keeper(server: ReturnType<typeof apiServer>, opts: CertificateOptions = OPTS) {
  const clock = fakeClock(START);
  const served: string[] = [];
  const cert = webhookCertificate(server.api, opts, (c) => { served.push(c); }, silent, createMetrics(), clock);
  return { clock, served, cert };
}

describe('the admission certificate keeper (fake time)', () => {
  it('writes the CA into a CRD\'s conversion webhook too (conversionCrd), once, conditional on what it read; not into a CRD that converts without a webhook', async () => {
    const server = apiServer();
    server.state.crd = crdWith({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'zonekeeper-webhook', namespace: 'zk', path: '/convert' } } } });
    const { clock, cert } = keeper(server, { ...OPTS, conversionCrd: 'workloadspreads.apps.kruise.io' });
    cert.keeper.start();
    try {
      await clock.advance(0);
      assert.equal(server.state.crd.spec.conversion.webhook.clientConfig.caBundle, server.state.secret.data['ca.crt'], 'the caBundle is the Secret\'s CA');
      assert.equal(server.state.crd.spec.conversion.webhook.clientConfig.service.path, '/convert', 'the rest of the clientConfig kept');
      await clock.advance(3_600_000);
      assert.equal(server.sent('PATCH', CRD), 1, 'the same CA is not written again');
    } finally {
      await cert.keeper.stop();
    }
    const none = apiServer();
    none.state.crd = crdWith({ strategy: 'None' });
    const other = keeper(none, { ...OPTS, conversionCrd: 'workloadspreads.apps.kruise.io' });
    other.cert.keeper.start();
    try {
      await other.clock.advance(0);
      assert.equal(none.sent('PATCH', CRD), 0);
      assert.ok(none.state.webhook.webhooks[0].clientConfig.caBundle, 'the webhook configuration\'s caBundle still written');
    } finally {
      await other.cert.keeper.stop();
    }
  });

  it('issues a CA and a serving certificate when the Secret is missing, serves it, writes the caBundle; renews it when due, found by the hourly resync', async () => {
    const server = apiServer();
    const { clock, served, cert } = keeper(server);
    cert.keeper.start();
    try {
      await clock.advance(0);
      assert.equal(server.sent('POST', SECRET), 1);
      assert.equal(served.length, 1);
      assert.equal(served[0], Buffer.from(server.state.secret.data['tls.crt'], 'base64').toString());
      assert.equal(server.state.webhook.webhooks[0].clientConfig.caBundle, server.state.secret.data['ca.crt'], 'the caBundle is the Secret\'s CA');
      const first = new X509Certificate(served[0]!);
      // Valid 10 days, renewed once it expires within 3: due just after day 7, seen by the first resync after it.
      await clock.advance(7 * DAY);
      assert.equal(server.sent('PUT', `${SECRET}/webhook-tls`), 0, 'not before it is due');
      assert.equal(server.sent('GET', `${SECRET}/webhook-tls`), 7 * 24 + 1, 'read once at the start and at every hourly resync');
      await clock.advance(3_600_000);
      assert.equal(server.sent('PUT', `${SECRET}/webhook-tls`), 1, 'renewed, conditional on the Secret read');
      assert.equal(served.length, 2);
      const second = new X509Certificate(served[1]!);
      assert.ok(Date.parse(second.validTo) > Date.parse(first.validTo));
      assert.equal(server.sent('PATCH', WEBHOOK), 1, 'the CA did not change: the caBundle is not written again');
    } finally {
      await cert.keeper.stop();
    }
  });

  it('a refused write is tried again after the queue\'s backoff (500 ms, then 1 s), not at the next resync', async () => {
    const server = apiServer([500, 500]);
    const { clock, served, cert } = keeper(server);
    cert.keeper.start();
    try {
      await clock.advance(0);
      assert.equal(server.api.requests.filter((r) => r.method === 'POST').length, 1);
      await clock.advance(499);
      assert.equal(server.api.requests.filter((r) => r.method === 'POST').length, 1);
      await clock.advance(1);
      assert.equal(server.api.requests.filter((r) => r.method === 'POST').length, 2);
      await clock.advance(999);
      assert.equal(served.length, 0);
      await clock.advance(1);
      assert.equal(server.sent('POST', SECRET), 3);
      assert.equal(served.length, 1, 'issued on the third try');
    } finally {
      await cert.keeper.stop();
    }
  });

  it('every replica serves what the Secret holds: read every 2 s while it holds nothing, then at every check interval (its resync)', async () => {
    const server = apiServer();
    const { clock, served, cert } = keeper(server);
    cert.startLoading();
    try {
      await clock.advance(0);
      await clock.advance(4_000);
      assert.equal(server.sent('GET', `${SECRET}/webhook-tls`), 3, 'at 0, 2 and 4 s');
      assert.deepEqual(served, []);
      const pki = renewed({}, 'ca', OPTS.names, START, OPTS.validityDays);
      server.state.secret = { metadata: { resourceVersion: '9' }, data: { 'ca.crt': b64(pki.caBundle), 'ca.key': b64(pki.caKey), 'tls.crt': b64(pki.cert), 'tls.key': b64(pki.key) } };
      await clock.advance(2_000);
      assert.deepEqual(served, [pki.cert]);
      await clock.advance(3_600_000 - 6_000 - 1);
      assert.equal(server.sent('GET', `${SECRET}/webhook-tls`), 4, 'served: read again at the resync, an hour after the start');
      await clock.advance(1);
      assert.equal(server.sent('GET', `${SECRET}/webhook-tls`), 5);
      assert.equal(served.length, 1, 'the same certificate is not served again');
    } finally {
      await cert.stopLoading();
    }
    await clock.advance(7_200_000);
    assert.equal(server.sent('GET', `${SECRET}/webhook-tls`), 5, 'stopped');
  });
});
