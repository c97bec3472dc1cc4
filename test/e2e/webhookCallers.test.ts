// End-to-end: who may call the webhooks (docs/security.md#who-may-call-the-webhooks). kube-apiserver
// presents a client certificate for its webhook calls (an AdmissionConfiguration's kubeConfigFile), and
// zonekeeper's admission listener requires one signed by that CA: the API server's reviews are served and
// decide pods as they are created; a caller on the network with no certificate, or one of its own, is
// refused at the handshake, one with a kubelet's certificate of the same CA is no one, and nothing changes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { clientPki, postTls, servingFiles } from '../support/clientCertificates.js';
import { ADMISSION_LABEL, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, freePort, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { statefulSet, tearDown, ZONES } from './workloads.js';

const NS = 'callers';
const newest = kubeVersions().at(-1);

const evictionReview = (pod: string) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: `forged-${pod}`, kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction', operation: 'CREATE', namespace: NS, name: pod, userInfo: { username: 'system:admin' },
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NS } },
  },
});

(newest ? describe : describe.skip)(`[${newest?.version}] who may call the webhooks: kube-apiserver's client certificate`, () => {
  const cp = new ControlPlane(newest!.bin);
  let kube: Kube;
  let port: number;
  const pki = clientPki();
  const serving = servingFiles(pki.caPem);

  before(async () => {
    port = await freePort();
    // kube-apiserver's webhook client: its certificate for every webhook host, as the docs configure it.
    const clientConfig = join(cp.dir, 'webhook-client.kubeconfig');
    writeFileSync(clientConfig, stringify({
      apiVersion: 'v1', kind: 'Config',
      users: [{ name: '*', user: { 'client-certificate-data': Buffer.from(pki.apiServer.cert).toString('base64'), 'client-key-data': Buffer.from(pki.apiServer.key).toString('base64') } }],
    }));
    const admissionConfig = join(cp.dir, 'admission.yaml');
    const plugin = (name: string) => ({ name, configuration: { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: clientConfig } });
    writeFileSync(admissionConfig, stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: [plugin('MutatingAdmissionWebhook'), plugin('ValidatingAdmissionWebhook')] }));
    cp.apiServerExtraFlags = [`--admission-control-config-file=${admissionConfig}`];
    await cp.up([{ name: 'default-scheduler', extender: false }], {
      admission: { listen: `127.0.0.1:${port}`, tls: serving.files, evictions: true }, leaderElection: { namespace: 'default' },
    });
    kube = new Kube(cp.api);
    for (const z of ZONES) await kube.addNode(`node-${z.slice(5)}-1`, z);
    const webhook = webhookConfiguration(port);
    webhook.webhooks[0].clientConfig.caBundle = Buffer.from(serving.servingCa).toString('base64');
    await kube.create(webhook);
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { [ADMISSION_LABEL]: 'enabled' } } });
    await eventually('zonekeeper holds the Lease', async () => /^zonekeeper_leader 1$/m.test(await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text()));
  });
  after(() => tearDown(cp));

  const metric = async (pattern: RegExp) => Number(pattern.exec(await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text())?.[1] ?? 0);

  it('kube-apiserver\'s reviews are served: pods get their zone as they are created', async () => {
    await kube.create(statefulSet(NS, 'db', 3));
    const pods = await eventually('3 db pods, each written a zone at creation', async () => {
      const list = await kube.podsOf(NS, 'app=db');
      return list.length === 3 && list.every((p: Obj) => !p.spec.schedulingGates?.length && JSON.stringify(p.spec).includes('topology.kubernetes.io/zone')) ? list : undefined;
    });
    assert.equal(pods.length, 3);
    assert.ok(await metric(/^zonekeeper_decisions_total\{verb="admission",outcome="admitted"\} (\d+)/m) >= 3, 'decided by admission, not by the gate');
    assert.equal(await metric(/^zonekeeper_bad_requests_total\{verb="admission",status="401"\} (\d+)/m), 0, 'no review of kube-apiserver\'s was taken as unauthenticated');
  });

  it('a forged eviction review from the network, with no certificate or one of its own, is refused at the handshake, with a kubelet\'s of the same CA answered 429; nothing is written', async () => {
    await kube.patch('apps/v1', 'StatefulSet', NS, 'db', { metadata: { annotations: { 'zonekeeper.io/zone-disruption-budget': '1' } } });
    await assert.rejects(postTls(port, '/admission/evictions', evictionReview('db-0'), { servingCa: serving.servingCa }), 'no certificate');
    await assert.rejects(postTls(port, '/admission/evictions', evictionReview('db-0'), { servingCa: serving.servingCa, client: pki.stranger }), 'a certificate of its own');
    // A kubelet's certificate from the same CA passes the handshake but is not kube-apiserver's subject: judged by no one.
    const kubelet = await postTls(port, '/admission/evictions', evictionReview('db-0'), { servingCa: serving.servingCa, client: pki.kubelet });
    assert.equal(kubelet.json.response.status.code, 429);
    const sts = await kube.get('apps/v1', 'StatefulSet', NS, 'db');
    assert.equal(sts.metadata.annotations?.['zonekeeper.io/disruption-approvals'], undefined, 'no approval written');
  });
});
