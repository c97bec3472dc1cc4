// Who may call the webhooks (docs/security.md#who-may-call-the-webhooks), as an attacker on the
// pod network would try: a forged eviction review and a forged pod review POSTed straight to the
// admission listener. With a client CA the handshake refuses a caller without kube-apiserver's
// certificate; without one (and no admission.trustNetwork) a review is answered but writes nothing.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { memorySource } from '../../src/cluster/source.js';
import { fakeClock } from '../../src/common/clock.js';
import { parseConfig } from '../../src/common/config.js';
import { house } from '../../src/house.js';
import { callerCheck } from '../../src/http/callers.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { listen, type Listener } from '../../src/server/listen.js';
import { silent } from '../support/app.js';
import { deployment, nodes, statefulSet, stsPod, storeOf, type Raw } from '../support/builders.js';
import { clientPki, postTls, servingFiles } from '../support/clientCertificates.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const BUDGETED = { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zone-disruption-budget': 'zone' };
const APPROVALS = 'zonekeeper.io/disruption-approvals';

const evictionReview = (pod: string) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: `forged-${pod}`, kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction', operation: 'CREATE', name: pod, namespace: 'other-tenant', userInfo: { username: 'system:serviceaccount:kube-system:karpenter' },
  },
});
const podReview = (owner: string) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: 'forged-pod', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace: 'default',
    object: { metadata: { generateName: `${owner}-rs-`, namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${owner}-rs`, uid: 'x', controller: true }] },
      spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
});

const pki = clientPki();
const open: Listener[] = [];
after(async () => { for (const l of open) await l.close(0); });

/** The admission listener as main.ts opens it, over an in-memory cluster with another tenant's budgeted StatefulSet and a Deployment with instance IDs. */
async function webhookListener(admission: Raw) {
  const sts = statefulSet('db', 6, { annotations: BUDGETED });
  sts.metadata.namespace = 'other-tenant';
  const pods = Array.from({ length: 6 }, (_, i) => {
    const p = stsPod('db', i, { nodeName: `node-${ZONES[i % 3]!.slice(5)}-1`, ready: true });
    p.metadata.namespace = 'other-tenant';
    return p;
  });
  const store = storeOf([...nodes(ZONES, 1), sts, ...pods, ...deployment('web', 3, { 'zonekeeper.io/instance-ids': 'true' })]);
  const config = parseConfig({ admission });
  const metrics = createMetrics();
  const h = house({ config, source: memorySource(store, 'test'), actuator: memoryActuator(store, silent, metrics), metrics, log: silent, clock: fakeClock(Date.parse('2026-11-21T00:00:00Z')), leading: () => true });
  const l = await listen(h.webhooks(1 << 20, callerCheck(config.admission)), '127.0.0.1:0', { tls: config.admission.tls, clock: fakeClock() });
  open.push(l);
  const written = () => ({
    approvals: store.workload('StatefulSet', 'other-tenant', 'db')!.annotations[APPROVALS],
    instanceIds: store.workload('Deployment', 'default', 'web')!.annotations['zonekeeper.io/instance-assignment'],
    reservations: h.service.views.reservationCount(),
  });
  return { l, written, metrics };
}

const NOTHING = { approvals: undefined, instanceIds: undefined, reservations: 0 };

describe('the admission listener with a client CA (admission.tls.clientCAFile)', () => {
  it('refuses at the handshake a forged eviction review from a client with no certificate, or with its own; nothing is written; kube-apiserver\'s certificate is served', async () => {
    const { files, servingCa } = servingFiles(pki.caPem);
    const { l, written } = await webhookListener({ listen: '127.0.0.1:0', evictions: true, tls: files });
    await assert.rejects(postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa }), 'no certificate: the handshake fails');
    await assert.rejects(postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa, client: pki.stranger }), 'a certificate the CA did not sign');
    await assert.rejects(postTls(l.port, '/admission/pods', podReview('web'), { servingCa }), 'a forged pod review alike');
    assert.deepEqual(written(), NOTHING);
    const served = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa, client: pki.apiServer });
    assert.equal(served.json.response.allowed, true);
    assert.match(written().approvals ?? '', /db-0/, 'kube-apiserver\'s review is judged and recorded');
  });

  it('takes a certificate the same CA signed for another subject (a kubelet\'s) as no one\'s: its forged reviews write nothing, counted 401', async () => {
    const { files, servingCa } = servingFiles(pki.caPem);
    const { l, written, metrics } = await webhookListener({ listen: '127.0.0.1:0', evictions: true, tls: files });
    const r = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa, client: pki.kubelet });
    assert.equal(r.json.response.status.code, 429);
    assert.match(r.json.response.status.message, /not known to be kube-apiserver/);
    await postTls(l.port, '/admission/pods', podReview('web'), { servingCa, client: pki.kubelet });
    assert.deepEqual(written(), NOTHING);
    assert.match(await metrics.registry.getSingleMetricAsString('zonekeeper_bad_requests_total'), /verb="eviction",status="401"} 1/);
    assert.match(await metrics.registry.getSingleMetricAsString('zonekeeper_bad_requests_total'), /verb="admission",status="401"} 1/);
  });

  it('takes the subjects configured (admission.tls.clientOrganizations), and then no longer the default CN', async () => {
    const { files, servingCa } = servingFiles(pki.caPem);
    const { l, written } = await webhookListener({ listen: '127.0.0.1:0', evictions: true, tls: { ...files, clientCommonNames: [], clientOrganizations: ['zonekeeper:webhook-callers'] } });
    const refused = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa, client: pki.apiServer });
    assert.equal(refused.json.response.status.code, 429, 'CN kube-apiserver is no longer named');
    assert.deepEqual(written(), NOTHING);
    const served = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa, client: pki.webhookClients });
    assert.equal(served.json.response.allowed, true);
    assert.match(written().approvals ?? '', /db-0/);
  });

  it('refuses to start with a client CA and no subject to accept', () => {
    assert.throws(() => parseConfig({ admission: { listen: '127.0.0.1:0', tls: { certFile: 'c', keyFile: 'k', clientCAFile: 'ca', clientCommonNames: [] } } }),
      /admission\.tls\.clientCommonNames: a client CA needs the subject of kube-apiserver's certificate/);
  });
});

describe('the admission listener without a client CA, admission.trustNetwork false (the default)', () => {
  it('answers a forged eviction review 429 naming why, and records no approval on the other tenant\'s workload', async () => {
    const { files, servingCa } = servingFiles();
    const { l, written, metrics } = await webhookListener({ listen: '127.0.0.1:0', evictions: true, tls: files });
    const r = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa });
    assert.equal(r.json.response.allowed, false);
    assert.equal(r.json.response.status.code, 429);
    assert.match(r.json.response.status.message, /not known to be kube-apiserver/);
    assert.deepEqual(written(), NOTHING);
    assert.match(await metrics.registry.getSingleMetricAsString('zonekeeper_bad_requests_total'), /verb="eviction",status="401"} 1/);
    assert.match(await metrics.registry.getSingleMetricAsString('zonekeeper_evictions_total'), /^(?![\s\S]*outcome="allowed"} [1-9])/, 'not judged at all');
  });

  it('answers a forged pod review naming another tenant\'s Deployment with the zone gate only: no reservation, no instance ID', async () => {
    const { files, servingCa } = servingFiles();
    const { l, written } = await webhookListener({ listen: '127.0.0.1:0', tls: files });
    for (let i = 0; i < 5; i++) {
      const r = await postTls(l.port, '/admission/pods', podReview('web'), { servingCa });
      assert.equal(r.json.response.allowed, true);
      // No API server here, so no gate keeper: the pod is left to the extender's filter (with a keeper: the zone gate, unit case).
      assert.equal(r.json.response.patch, undefined);
      assert.match(r.json.response.warnings[0], /not known to be kube-apiserver/);
    }
    assert.deepEqual(written(), NOTHING);
  });

  it('with admission.trustNetwork the same review is taken as kube-apiserver\'s (the operator asserts a NetworkPolicy)', async () => {
    const { files, servingCa } = servingFiles();
    const { l, written } = await webhookListener({ listen: '127.0.0.1:0', trustNetwork: true, tls: files });
    await postTls(l.port, '/admission/pods', podReview('web'), { servingCa });
    assert.ok(written().instanceIds, 'an instance ID taken');
  });
});

describe('/admission/evictions is served only where configured', () => {
  it('without admission.evictions (or an eviction webhook configuration to keep) it is a 404, and nothing is judged', async () => {
    const { files, servingCa } = servingFiles();
    const { l, written } = await webhookListener({ listen: '127.0.0.1:0', trustNetwork: true, tls: files });
    const r = await postTls(l.port, '/admission/evictions', evictionReview('db-0'), { servingCa });
    assert.equal(r.status, 404);
    assert.deepEqual(written(), NOTHING);
  });
});
