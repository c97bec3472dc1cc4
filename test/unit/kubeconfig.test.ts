// Reading a kubeconfig and the pod's service account without @kubernetes/client-node: which
// cluster and credentials a kubeconfig names, clear errors when it names nothing usable, token
// files re-read as client-go does.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { inCluster, loadClusterAccess } from '../../src/cluster/kubeconfig.js';

function kubeconfig(doc: Record<string, unknown>, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'zk-kubeconfig-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const path = join(dir, 'config');
  writeFileSync(path, stringify(doc));
  return path;
}

const config = (cluster: Record<string, unknown>, user: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'ctx',
  contexts: [{ name: 'other', context: { cluster: 'wrong', user: 'wrong' } }, { name: 'ctx', context: { cluster: 'c', user: 'u' } }],
  clusters: [{ name: 'wrong', cluster: { server: 'https://wrong:1' } }, { name: 'c', cluster }],
  users: [{ name: 'wrong', user: { token: 'wrong' } }, { name: 'u', user }],
});

async function applied(access: ReturnType<typeof loadClusterAccess>): Promise<https.RequestOptions> {
  const opts: https.RequestOptions = { headers: {} };
  await access.apply(opts);
  return opts;
}

describe('kubeconfig', () => {
  it('takes the current context\'s cluster and user, files relative to the kubeconfig\'s directory', async () => {
    const path = kubeconfig(config(
      { server: 'https://api.example:6443/', 'certificate-authority': 'ca.pem', 'tls-server-name': 'kube.internal' },
      { 'client-certificate': 'client.pem', 'client-key-data': Buffer.from('KEY').toString('base64'), token: 'tok', as: 'someone' },
    ), { 'ca.pem': 'CA', 'client.pem': 'CERT' });
    const access = loadClusterAccess({ kind: 'kubeconfig', path });
    assert.equal(access.server, 'https://api.example:6443');
    assert.equal(access.skipTLSVerify, false);
    assert.equal(access.tlsServerName, 'kube.internal');
    const opts = await applied(access);
    assert.equal(String(opts.ca), 'CA');
    assert.equal(String(opts.cert), 'CERT');
    assert.equal(String(opts.key), 'KEY');
    assert.equal(opts.servername, 'kube.internal');
    assert.equal(opts.rejectUnauthorized, undefined);
    assert.deepEqual(opts.headers, { Authorization: 'Bearer tok', 'Impersonate-User': 'someone' });
  });

  it('insecure-skip-tls-verify, basic auth, and a context without a user', async () => {
    const skip = await applied(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig(config({ server: 'https://a:1', 'insecure-skip-tls-verify': true }, { username: 'me', password: 'pw' })) }));
    assert.equal(skip.rejectUnauthorized, false);
    assert.equal(skip.auth, 'me:pw');
    assert.deepEqual(skip.headers, {});
    const doc = { ...config({ server: 'https://a:1', 'certificate-authority-data': Buffer.from('CA').toString('base64') }), contexts: [{ name: 'ctx', context: { cluster: 'c' } }] };
    const anonymous = await applied(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig(doc) }));
    assert.equal(String(anonymous.ca), 'CA', 'the cluster\'s CA applies without a user');
    assert.deepEqual(anonymous.headers, {});
  });

  it('a token file is read again once a minute has passed (kubelet rotates projected tokens)', async () => {
    const path = kubeconfig(config({ server: 'https://a:1' }, { 'token-file': 'token' }), { token: 'first\n' });
    let now = 1_000_000;
    const access = loadClusterAccess({ kind: 'kubeconfig', path }, {}, () => now);
    assert.deepEqual((await applied(access)).headers, { Authorization: 'Bearer first' });
    writeFileSync(join(path, '..', 'token'), 'second');
    now += 30_000;
    assert.deepEqual((await applied(access)).headers, { Authorization: 'Bearer first' }, 'within the minute');
    now += 31_000;
    assert.deepEqual((await applied(access)).headers, { Authorization: 'Bearer second' });
  });

  it('names what is missing when the kubeconfig names no usable cluster', () => {
    const load = (doc: Record<string, unknown>) => () => loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig(doc) });
    assert.throws(load({ ...config({ server: 'https://a:1' }), 'current-context': undefined }), /no current context in .*config/);
    assert.throws(load({ ...config({ server: 'https://a:1' }), 'current-context': 'nope' }), /no context named nope/);
    assert.throws(load({ ...config({ server: 'https://a:1' }), clusters: [] }), /no cluster named c/);
    assert.throws(load(config({ 'insecure-skip-tls-verify': true })), /cluster c in .* has no server/);
    assert.throws(load({ ...config({ server: 'https://a:1' }), users: { u: {} } }), /users is not a list/);
    assert.throws(load({ ...config({ server: 'https://a:1' }), clusters: [{ name: 'c', cluster: 'https://a:1' }] }), /cluster c is not a mapping/);
    assert.throws(() => loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig(config({ server: 'https://a:1', 'certificate-authority': 'missing.pem' })) }), /ENOENT.*missing\.pem/);
  });
});

describe('in-cluster', () => {
  const serviceAccount = () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-sa-'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ca.crt'), 'CLUSTER-CA');
    writeFileSync(join(dir, 'token'), 'sa-token\n');
    return dir;
  };

  it('the API server from the environment, the service account\'s CA and token', async () => {
    const access = inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccount());
    assert.equal(access.server, 'https://10.96.0.1:443');
    const opts = await applied(access);
    assert.equal(String(opts.ca), 'CLUSTER-CA');
    assert.deepEqual(opts.headers, { Authorization: 'Bearer sa-token' });
    assert.equal(inCluster({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccount()).server, 'https://[fd00::1]:443');
    assert.equal(inCluster({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '8080' }, serviceAccount()).server, 'http://10.0.0.1:8080');
  });

  it('without the service\'s environment: a clear error', () => {
    assert.throws(() => inCluster({}, serviceAccount()), /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
  });
});
