// The credentials a kubeconfig names, over real connections on 127.0.0.1: a TLS server that
// requires a client certificate from its CA (certificates made by openssl), and the fake API
// server's bearer token produced by an exec plugin (the case left to @kubernetes/client-node).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { kubeApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import { FakeApiServer } from '../support/fakeApiServer.js';

const dir = mkdtempSync(join(tmpdir(), 'zk-tls-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });

/** A CA, a server certificate for DNS name `kube.test` only, and a client certificate for CN `zonekeeper`. */
function certificates() {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=zk-test-ca');
  for (const [name, subj, ext] of [['server', '/CN=kube.test', 'subjectAltName=DNS:kube.test'], ['client', '/CN=zonekeeper', 'extendedKeyUsage=clientAuth']] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj);
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
  }
}

function kubeconfigFile(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster }], users: [{ name: 'u', user }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return path;
}

describe('a kubeconfig\'s TLS: the cluster\'s CA, tls-server-name, a client certificate', () => {
  let server: https.Server;
  let url = '';
  before(async () => {
    certificates();
    const read = (f: string) => readFileSync(join(dir, f));
    server = https.createServer({ key: read('server.key'), cert: read('server.pem'), ca: read('ca.pem'), requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.end(JSON.stringify({ client: peer.subject?.CN, authorization: req.headers.authorization ?? null }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const get = async (path: string) => (await kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path })).request('GET', '/version', { timeoutMs: 5000 })).body;

  it('files relative to the kubeconfig: the server is verified by name and sees the client certificate', async () => {
    const path = kubeconfigFile('files', { server: url, 'certificate-authority': 'ca.pem', 'tls-server-name': 'kube.test' }, { 'client-certificate': 'client.pem', 'client-key': 'client.key', token: 't' });
    assert.deepEqual(JSON.parse(await get(path)), { client: 'zonekeeper', authorization: 'Bearer t' });
  });

  it('the same as base64 data', async () => {
    const data = (f: string) => readFileSync(join(dir, f)).toString('base64');
    const path = kubeconfigFile('data', { server: url, 'certificate-authority-data': data('ca.pem'), 'tls-server-name': 'kube.test' }, { 'client-certificate-data': data('client.pem'), 'client-key-data': data('client.key') });
    assert.deepEqual(JSON.parse(await get(path)), { client: 'zonekeeper', authorization: null });
  });

  it('verification stays on: no CA, or a name the certificate does not hold, fails', async () => {
    const user = { 'client-certificate': 'client.pem', 'client-key': 'client.key' };
    await assert.rejects(get(kubeconfigFile('no-ca', { server: url, 'tls-server-name': 'kube.test' }, user)), /self-signed certificate|unable to verify/);
    await assert.rejects(get(kubeconfigFile('no-name', { server: url, 'certificate-authority': 'ca.pem' }, user)), /IP: 127\.0\.0\.1 is not in the cert's list|does not match/);
  });

  it('no client certificate: the server refuses the handshake', async () => {
    await assert.rejects(get(kubeconfigFile('no-client', { server: url, 'certificate-authority': 'ca.pem', 'tls-server-name': 'kube.test' }, { token: 't' })));
  });
});

describe('a kubeconfig whose user runs an exec plugin', () => {
  let api: FakeApiServer;
  before(async () => { api = await new FakeApiServer().start(); });
  after(() => api.stop());

  it('@kubernetes/client-node runs it, and its token reaches the API server', async () => {
    const plugin = join(dir, 'plugin.mjs');
    const credential = (token: string) => JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } });
    writeFileSync(plugin, `process.stdout.write(${JSON.stringify(credential('test-token'))});\n`);
    const exec = (path: string) => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [path], interactiveMode: 'Never' } });
    const cluster = { server: `http://127.0.0.1:${api.port}`, 'insecure-skip-tls-verify': true };
    const ok = kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfigFile('exec', cluster, exec(plugin)) }));
    assert.equal((await ok.request('GET', '/api/v1/nodes')).status, 200);
    const wrongPlugin = join(dir, 'wrong.mjs');
    writeFileSync(wrongPlugin, `process.stdout.write(${JSON.stringify(credential('wrong-token'))});\n`);
    const wrong = kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfigFile('exec-wrong', cluster, exec(wrongPlugin)) }));
    assert.equal((await wrong.request('GET', '/api/v1/nodes')).status, 401, 'the plugin\'s token is what is sent');
  });
});
