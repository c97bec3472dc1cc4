// The floor an admission webhook cannot go below: a bare node:https process that parses the
// AdmissionReview and answers allowed, with no patch. Used by the admission bench beside
// zonekeeper, and by the e2e measurement as a second webhook in front of PodTopologySpread.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { renewed } from '../../src/controllers/webhookPki.js';

const ECHO = `
const https = require('node:https');
const { cert, key } = JSON.parse(Buffer.from(process.env.ZK_ECHO_PKI, 'base64').toString());
const s = https.createServer({ cert, key }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
  });
});
s.keepAliveTimeout = 65000;
s.listen(0, '127.0.0.1', () => console.log('https://127.0.0.1:' + s.address().port));`;

/** A CA and a serving certificate for 127.0.0.1, valid for a day. */
export function loopbackPki(): { cert: string; key: string; caBundle: string } {
  // Valid now by the system's time: kube-apiserver and the TLS clients check it against that.
  return renewed({}, 'ca', { dnsNames: [], ipAddresses: ['127.0.0.1'] }, Date.now(), 1);
}

/** Starts the echo in its own process, serving `pki`'s certificate; `url` is its root. */
export async function startEchoWebhook(pki: { cert: string; key: string }): Promise<{ url: URL; child: ChildProcess }> {
  const env = { ...process.env, ZK_ECHO_PKI: Buffer.from(JSON.stringify({ cert: pki.cert, key: pki.key })).toString('base64') };
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const url = new URL(String((await once(child.stdout!, 'data'))[0]).trim());
  return { url, child };
}
