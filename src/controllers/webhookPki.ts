import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

// The webhook's certificates (docs/operations.md#the-admission-certificate): a CA and a serving
// certificate it signs, issued with node-forge (X.509 and its ASN.1), keys from Node's crypto,
// checked with Node's X509Certificate. Pure apart from the clock and randomness passed in.

/** What zonekeeper keeps in its Secret (type kubernetes.io/tls, plus the CA's key to sign renewals). */
export interface WebhookPki {
  /** PEM: the CA, then the previous CA while it is still valid (the caBundle, so a CA rotation never breaks a call). */
  caBundle: string;
  caKey: string;
  cert: string;
  key: string;
}

export interface ServingNames { dnsNames: readonly string[]; ipAddresses: readonly string[] }

const DAY_MS = 86_400_000;
/** A CA outlives many serving certificates: renewed serving certificates keep the caBundle unchanged. */
const CA_VALIDITY_FACTOR = 10;

function rsaKey(): { pem: string; forge: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { pem, forge: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

function certificate(o: {
  subject: string; issuer: forge.pki.CertificateField[] | undefined; publicKey: forge.pki.PublicKey; signer: forge.pki.rsa.PrivateKey;
  from: number; days: number; extensions: object[];
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  // A positive serial of 16 random bytes (RFC 5280: at most 20 octets, positive).
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.publicKey = o.publicKey;
  cert.validity.notBefore = new Date(o.from - 5 * 60_000);
  cert.validity.notAfter = new Date(o.from + o.days * DAY_MS);
  const subject = [{ name: 'commonName', value: o.subject }];
  cert.setSubject(subject);
  cert.setIssuer(o.issuer ?? subject);
  cert.setExtensions(o.extensions);
  cert.sign(o.signer, forge.md.sha256.create());
  return cert;
}

/** A new CA (valid `days` × 10) and a serving certificate for `names` (valid `days`). */
function issueCa(now: number, days: number): { caCert: string; caKey: string } {
  const ca = rsaKey();
  const cert = certificate({
    subject: 'zonekeeper-webhook-ca', issuer: undefined, publicKey: ca.publicKey, signer: ca.forge, from: now, days: days * CA_VALIDITY_FACTOR,
    extensions: [{ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }],
  });
  return { caCert: forge.pki.certificateToPem(cert), caKey: ca.pem };
}

/** A serving certificate for `names`, signed by the CA. */
function issueServing(ca: { caCert: string; caKey: string }, names: ServingNames, now: number, days: number): { cert: string; key: string } {
  const leaf = rsaKey();
  const issuer = forge.pki.certificateFromPem(ca.caCert);
  const altNames = [...names.dnsNames.map((value) => ({ type: 2, value })), ...names.ipAddresses.map((ip) => ({ type: 7, ip }))];
  const cert = certificate({
    subject: names.dnsNames[0] ?? names.ipAddresses[0] ?? 'zonekeeper-webhook', issuer: issuer.subject.attributes, publicKey: leaf.publicKey,
    signer: forge.pki.privateKeyFromPem(ca.caKey) as forge.pki.rsa.PrivateKey, from: now, days,
    extensions: [
      { name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: forge.pki.certificateToPem(cert), key: leaf.pem };
}

/** The first PEM certificate of a bundle. */
const firstPem = (bundle: string) => bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)?.[0];

/** The names a serving certificate covers, as its subjectAltName lists them. */
function coveredNames(cert: X509Certificate): ServingNames {
  const dnsNames: string[] = [], ipAddresses: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(', ')) {
    if (part.startsWith('DNS:')) dnsNames.push(part.slice(4));
    else if (part.startsWith('IP Address:')) ipAddresses.push(part.slice(11));
  }
  return { dnsNames, ipAddresses };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/** What must be issued again, and why: the CA (and with it the serving certificate), the serving certificate alone, or nothing. */
export function renewalDue(pki: Partial<WebhookPki>, names: ServingNames, now: number, renewBeforeDays: number): { what: 'ca' | 'serving'; why: string } | undefined {
  const soon = now + renewBeforeDays * DAY_MS;
  const caPem = pki.caBundle && firstPem(pki.caBundle);
  if (!caPem || !pki.caKey) return { what: 'ca', why: 'no CA yet' };
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(caPem);
    if (!ca.checkPrivateKey(createPrivateKey(pki.caKey))) return { what: 'ca', why: "the CA's key does not match it" };
  } catch (err) {
    return { what: 'ca', why: `the CA cannot be read: ${(err as Error).message}` };
  }
  // The CA is renewed while the serving certificate it signed is still good for the overlap.
  if (Date.parse(ca.validTo) < soon + renewBeforeDays * DAY_MS) return { what: 'ca', why: `the CA expires ${ca.validTo}` };
  if (!pki.cert || !pki.key) return { what: 'serving', why: 'no serving certificate yet' };
  try {
    const cert = new X509Certificate(pki.cert);
    if (!cert.verify(ca.publicKey)) return { what: 'serving', why: 'the serving certificate is not signed by the CA' };
    if (!cert.checkPrivateKey(createPrivateKey(pki.key))) return { what: 'serving', why: 'the serving key does not match its certificate' };
    if (Date.parse(cert.validTo) < soon) return { what: 'serving', why: `the serving certificate expires ${cert.validTo}` };
    const covered = coveredNames(cert);
    if (!sameSet(covered.dnsNames, names.dnsNames) || !sameSet(covered.ipAddresses, names.ipAddresses)) {
      return { what: 'serving', why: `the serving certificate names ${[...covered.dnsNames, ...covered.ipAddresses].join(', ') || 'nothing'}, not what admission.certificate asks` };
    }
  } catch (err) {
    return { what: 'serving', why: `the serving certificate cannot be read: ${(err as Error).message}` };
  }
  return undefined;
}

/** `pki` with what `due` says renewed; a rotated CA keeps the previous one in the bundle while it is valid. */
export function renewed(pki: Partial<WebhookPki>, due: 'ca' | 'serving', names: ServingNames, now: number, days: number): WebhookPki {
  let caBundle = pki.caBundle ?? '', caKey = pki.caKey ?? '';
  if (due === 'ca') {
    const fresh = issueCa(now, days);
    const previous = caBundle && firstPem(caBundle);
    let keep = '';
    try {
      if (previous && Date.parse(new X509Certificate(previous).validTo) > now) keep = previous;
    } catch {
      keep = '';
    }
    caBundle = keep ? `${fresh.caCert.trim()}\n${keep}\n` : fresh.caCert;
    caKey = fresh.caKey;
  }
  const caCert = firstPem(caBundle)!;
  const serving = issueServing({ caCert, caKey }, names, now, days);
  return { caBundle, caKey, ...serving };
}
