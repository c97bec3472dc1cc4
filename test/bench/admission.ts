// Admission at 5,000 nodes and 150,000 pods (issue 41): p50 and p99 per AdmissionReview over
// HTTPS against a bare echo webhook in its own process (parse the review, answer allowed), in
// interleaved rounds, each route's median and range over the rounds.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import https from 'node:https';
import { rawPod } from './cluster.js';
import { fmt, measureCalls, procCpu, type Measured } from './measure.js';
import { target } from './targets.js';
import { loopbackPki, startEchoWebhook } from '../support/echoWebhook.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// As the image runs it (Dockerfile): a larger young generation, fewer scavenges per review.
const SERVER_FLAGS = process.env.BENCH_SERVER_FLAGS ?? '--max-semi-space-size=32';

async function started(child: ChildProcess): Promise<URL> {
  return new URL(String((await once(child.stdout!, 'data'))[0]).trim());
}

/** An AdmissionReview of a pod being created: no UID, no node; the same review UID each time, as a retried review (one reservation, replaced). */
function review(uid: string, pod: Record<string, any>): string {
  const metadata = { ...pod.metadata, uid: undefined, resourceVersion: undefined, creationTimestamp: undefined };
  const object = { ...pod, metadata, spec: { ...pod.spec, nodeName: undefined }, status: {} };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE',
      namespace: object.metadata.namespace, object, dryRun: false,
    },
  });
}

export async function admissionCase(nodes = 5000, pods = 150_000): Promise<void> {
  const pki = loopbackPki();
  const env = { ...process.env, ZK_BENCH_PKI: Buffer.from(JSON.stringify({ cert: pki.cert, key: pki.key })).toString('base64') };
  const zk = spawn(process.execPath, [...SERVER_FLAGS.split(' ').filter(Boolean), '--import', 'tsx', new URL('./admissionServer.ts', import.meta.url).pathname, String(nodes), String(pods)], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const zkUrl = await started(zk);
  const { url: echoUrl, child: echo } = await startEchoWebhook(pki);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca: pki.caBundle });
  const post = (base: URL, body: string) => new Promise<void>((resolve, reject) => {
    const req = https.request({ host: base.hostname, port: base.port, path: '/admission/pods', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 && text.includes('"allowed":true') ? resolve() : reject(new Error(`${res.statusCode} ${text.slice(0, 200)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
  const sts = rawPod(4, { kind: 'StatefulSet', name: 'db' });
  Object.assign(sts.metadata, { namespace: 'default', name: 'db-4' });
  sts.spec.volumes = [];
  const web = rawPod(0, { kind: 'ReplicaSet', name: 'web-rs' });
  Object.assign(web.metadata, { namespace: 'default', name: undefined, generateName: 'web-rs-' });
  web.spec.volumes = [];
  const plain = rawPod(1, { kind: 'ReplicaSet', name: 'plain-rs' });
  const rows: [string, URL, string, ChildProcess][] = [
    ['admission: StatefulSet pin', zkUrl, review('rev-sts', sts), zk],
    ['admission: zone balance (shared counts)', zkUrl, review('rev-web', web), zk],
    ['admission: pod no policy covers', zkUrl, review('rev-plain', plain), zk],
    ['echo webhook', echoUrl, review('rev-echo', sts), echo],
  ];
  for (let i = 0; i < 300; i++) for (const [, base, body] of rows) await post(base, body);
  const runs = new Map<string, Measured[]>(rows.map(([label]) => [label, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, base, body, child] of rows) runs.get(label)!.push(await measureCalls(() => post(base, body), procCpu(child.pid!)));
  }
  zk.kill('SIGINT');
  echo.kill();
  agent.destroy();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const range = (xs: number[]) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
  console.log(`\nadmission over HTTPS, ${nodes} cached nodes and ${pods} pods, ${ROUNDS} interleaved rounds (median, range)`);
  console.log('case                                      p50 ms (range)            p99 ms (range)            CPU us/review');
  for (const [label] of rows) {
    const r = runs.get(label)!;
    console.log(`${label.padEnd(41)} ${`${fmt(median(r.map((x) => x.median)))} (${range(r.map((x) => x.median))})`.padEnd(25)} ${`${fmt(median(r.map((x) => x.p99)))} (${range(r.map((x) => x.p99))})`.padEnd(25)} ${fmt(median(r.map((x) => x.cpuPerRequest)), 0)}`);
  }
  const echoP99 = runs.get('echo webhook')!.map((x) => x.p99);
  for (const label of ['admission: StatefulSet pin', 'admission: zone balance (shared counts)']) {
    const ratios = runs.get(label)!.map((x, i) => x.p99 / echoP99[i]!);
    target(`${nodes} nodes, ${pods} pods: ${label} p99 / echo webhook p99 (median of ${ROUNDS} rounds)`, median(ratios), 1.3, true);
  }
}
