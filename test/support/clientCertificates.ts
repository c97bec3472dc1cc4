// Certificates for a TLS listener and its callers in tests: a CA (as kube-apiserver's client CA),
// a serving certificate for 127.0.0.1, and client certificates signed by it or by a stranger.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { renewed } from '../../src/controllers/webhookPki.js';

export interface Pem { cert: string; key: string }

function keyPair(): { pem: string; forge: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { pem, forge: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

/** A certificate for `commonName` (and `organization`), signed by `ca` (self-signed CA when undefined); `client`: clientAuth, else a CA. */
type Issued = { pem: Pem; cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey };
function issue(commonName: string, ca: Omit<Issued, 'pem'> | undefined, organization?: string): Issued {
  const k = keyPair();
  const cert = forge.pki.createCertificate();
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.publicKey = k.publicKey;
  // Valid by the system's time: the TLS stack checks it against that.
  cert.validity.notBefore = new Date(Date.now() - 3_600_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: commonName }, ...(organization ? [{ name: 'organizationName', value: organization }] : [])]);
  cert.setIssuer(ca ? ca.cert.subject.attributes : [{ name: 'commonName', value: commonName }]);
  cert.setExtensions(ca
    ? [{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true }, { name: 'extKeyUsage', clientAuth: true }]
    : [{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }]);
  cert.sign(ca?.key ?? k.forge, forge.md.sha256.create());
  return { pem: { cert: forge.pki.certificateToPem(cert), key: k.pem }, cert, key: k.forge };
}

/** A client CA and what it signs, and a stranger's certificate (a CA of its own, not the listener's). */
export function clientPki() {
  const ca = issue('kube-apiserver-client-ca', undefined);
  const stranger = issue('stranger-ca', undefined);
  return {
    caPem: ca.pem.cert,
    /** kube-apiserver's client certificate (AdmissionConfiguration kubeConfigFile). */
    apiServer: issue('kube-apiserver', ca).pem,
    /** A kubelet's client certificate, signed by the same CA (a cluster CA signs both). */
    kubelet: issue('system:node:node-a-1', ca, 'system:nodes').pem,
    /** Another of the CA's, whose organization an operator may name (admission.tls.clientOrganizations). */
    webhookClients: issue('apiserver-webhook-client', ca, 'zonekeeper:webhook-callers').pem,
    /** A certificate a tenant made for itself. */
    stranger: issue('system:serviceaccount:tenant:default', stranger).pem,
  };
}

/** Serving certificate and key for 127.0.0.1, and `clientCa` when given, written to files for a listener. */
export function servingFiles(clientCa?: string): { files: { certFile: string; keyFile: string; clientCAFile: string }; servingCa: string } {
  const dir = mkdtempSync(join(tmpdir(), 'zk-callers-'));
  const pki = renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 2);
  const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCAFile: clientCa ? join(dir, 'client-ca.crt') : '' };
  writeFileSync(files.certFile, pki.cert);
  writeFileSync(files.keyFile, pki.key);
  if (clientCa) writeFileSync(files.clientCAFile, clientCa);
  return { files, servingCa: pki.caBundle };
}

/** POSTs JSON over HTTPS, presenting `client` when given; a refused handshake rejects. */
export function postTls(port: number, path: string, body: unknown, o: { servingCa: string; client?: Pem }): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path, method: 'POST', ca: o.servingCa, ...(o.client ?? {}), agent: false,
      headers: { 'content-type': 'application/json' },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
