import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { renewalDue, renewed } from '../../src/controllers/webhookPki.js';

// The webhook's certificates (docs/operations.md#the-admission-certificate): issued, checked, renewed.

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-25T00:00:00Z');
const names = { dnsNames: ['zonekeeper-webhook.zonekeeper.svc'], ipAddresses: ['127.0.0.1'] };

describe('the webhook certificate', () => {
  const pki = renewed({}, 'ca', names, NOW, 365);

  it('a CA and a serving certificate for the names asked, signed by it, that a TLS client trusting the caBundle accepts', async () => {
    const cert = new X509Certificate(pki.cert);
    assert.equal(cert.subjectAltName, 'DNS:zonekeeper-webhook.zonekeeper.svc, IP Address:127.0.0.1');
    assert.ok(cert.verify(new X509Certificate(pki.caBundle).publicKey));
    assert.equal(new X509Certificate(pki.caBundle).ca, true);
    assert.equal(renewalDue(pki, names, NOW, 30), undefined, 'nothing due right after issuing');
    // A real handshake: the server serves the certificate, the client trusts only the caBundle and checks the IP.
    const server = https.createServer({ cert: pki.cert, key: pki.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        https.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca: pki.caBundle }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      assert.equal(body, 'ok');
    } finally {
      server.close();
    }
  });

  it('renewal: the serving certificate renewBeforeDays before it expires, under the same CA; again when the names change', () => {
    assert.equal(renewalDue(pki, names, NOW + 330 * DAY, 30), undefined);
    const due = renewalDue(pki, names, NOW + 336 * DAY, 30);
    assert.equal(due?.what, 'serving');
    assert.match(due!.why, /expires/);
    const next = renewed(pki, 'serving', names, NOW + 336 * DAY, 365);
    assert.equal(next.caBundle, pki.caBundle, 'the caBundle is unchanged: no webhook configuration write');
    assert.notEqual(next.cert, pki.cert);
    assert.equal(renewalDue(next, names, NOW + 336 * DAY, 30), undefined);
    assert.match(renewalDue(pki, { dnsNames: names.dnsNames, ipAddresses: [] }, NOW, 30)!.why, /names zonekeeper-webhook.zonekeeper.svc, 127.0.0.1/);
  });

  it('the CA is rotated before it expires, the old one kept in the bundle while valid; a serving certificate of another CA is replaced', () => {
    assert.equal(renewalDue(pki, names, NOW + 3600 * DAY, 30)?.what, 'ca');
    const rotated = renewed(pki, 'ca', names, NOW + 3600 * DAY, 365);
    assert.equal(rotated.caBundle.match(/BEGIN CERTIFICATE/g)?.length, 2);
    assert.ok(rotated.caBundle.includes(pki.caBundle.trim()), 'the previous CA still trusted');
    const other = renewed({}, 'ca', names, NOW, 365);
    assert.match(renewalDue({ ...pki, cert: other.cert, key: other.key }, names, NOW, 30)!.why, /not signed by the CA/);
    assert.match(renewalDue({ ...pki, key: other.key }, names, NOW, 30)!.why, /key does not match/);
    assert.equal(renewalDue({ ...pki, caBundle: 'garbage' }, names, NOW, 30)?.what, 'ca');
  });
});
