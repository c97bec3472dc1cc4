// helm test: zonekeeper is ready (/readyz through a Service over every replica's health-only
// port) and, with admission, its webhook answers a pod review over TLS trusted by the CA it keeps.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

const { ZONEKEEPER_PROBES: probes, ZONEKEEPER_WEBHOOK: webhook, ZONEKEEPER_WEBHOOK_CA: caFile, ZONEKEEPER_NAMESPACE: namespace } = process.env;
const deadline = Date.now() + Number(process.env.ZONEKEEPER_TEST_SECONDS ?? '60') * 1000;

/** Tries until `attempt` answers or the deadline passes; prints what it saw either way. */
async function untilAnswered(what, attempt) {
  for (;;) {
    try {
      console.log(`${what}: ${await attempt()}`);
      return;
    } catch (err) {
      if (Date.now() >= deadline) {
        console.error(`${what}: ${err.message}`);
        process.exit(1);
      }
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** A bare pod's CREATE review: zonekeeper lets it through unchanged and echoes its uid. */
function review() {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: 'helm-test', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', namespace,
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'helm-test', namespace }, spec: { containers: [{ name: 'c', image: 'none' }] } },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(`${webhook}/admission/pods`, { method: 'POST', ca: readFileSync(caFile), headers: { 'content-type': 'application/json' }, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const answer = res.statusCode === 200 ? JSON.parse(text).response : undefined;
        if (answer?.uid === 'helm-test' && answer.allowed === true) resolve(`${res.statusCode} allowed`);
        else reject(new Error(`${res.statusCode} ${text.slice(0, 300)}`));
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 5 s')));
    req.on('error', reject);
    req.end(body);
  });
}

await untilAnswered(`GET ${probes}/readyz`, async () => {
  const res = await fetch(`${probes}/readyz`, { signal: AbortSignal.timeout(5000) });
  const text = (await res.text()).trim();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  return `${res.status} ${text}`;
});
if (webhook) await untilAnswered(`POST ${webhook}/admission/pods`, review);
