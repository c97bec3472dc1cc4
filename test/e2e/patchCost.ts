// What one pod PATCH costs the API server and etcd (CPU per patch), by patch type, on a control
// plane with nothing else running: the write the zone gate adds per pod (docs/performance.md).
// Not part of the e2e: `KUBE_BIN_DIRS=<bin dir> node --import tsx test/e2e/patchCost.ts`
// (N pods per round, default 1,000; REPS rounds of every type, default 3).
import https from 'node:https';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { Kube } from './kube.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';

const k = kubeVersions().at(-1)!;
const cp = new ControlPlane(k.bin);
await cp.up([]);
// Down whatever happens: a control plane left running loads every later measurement.
try {
  const kube = new Kube(cp.api);
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pc' } });
  const access = loadClusterAccess({ kind: 'kubeconfig', path: cp.kubeconfig });
  const base: https.RequestOptions = { headers: {} };
  await access.apply(base);
  const url = new URL(access.server);
  const agent = new https.Agent({ keepAlive: true, ca: base.ca, cert: base.cert, key: base.key, maxSockets: 64, rejectUnauthorized: false });
  function req(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const r = https.request({ method, agent, hostname: url.hostname, port: url.port, path, headers: { ...base.headers, ...headers } }, (res) => {
        const chunks: Buffer[] = []; res.on('data', (c) => chunks.push(c)); res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
      });
      r.on('error', reject); r.end(body);
    });
  }
  async function pool<T>(items: T[], n: number, f: (t: T) => Promise<void>) {
    let i = 0; await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await f(items[i++]!); }));
  }
  const N = Number(process.env.N ?? 1000);
  const podJson = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'pc', labels: { app: 'x' } }, spec: { schedulingGates: [{ name: 'test/hold' }], containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }] } });
  /** Each type lifts a gate and writes a nodeSelector, conditional on the version created. */
  const variants: Record<string, (name: string, rv: string) => [string, string, Record<string, string>]> = {
    merge: (n, rv) => [`/api/v1/namespaces/pc/pods/${n}`, JSON.stringify({ metadata: { resourceVersion: rv }, spec: { schedulingGates: null, nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } } }), { 'content-type': 'application/merge-patch+json', accept: 'application/json' }],
    mergeIgnore: (n, rv) => [`/api/v1/namespaces/pc/pods/${n}?fieldValidation=Ignore`, JSON.stringify({ metadata: { resourceVersion: rv }, spec: { schedulingGates: null, nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } } }), { 'content-type': 'application/merge-patch+json', accept: 'application/json' }],
    mergeProto: (n, rv) => [`/api/v1/namespaces/pc/pods/${n}`, JSON.stringify({ metadata: { resourceVersion: rv }, spec: { schedulingGates: null, nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } } }), { 'content-type': 'application/merge-patch+json', accept: 'application/vnd.kubernetes.protobuf' }],
    jsonPatch: (n, rv) => [`/api/v1/namespaces/pc/pods/${n}`, JSON.stringify([{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'remove', path: '/spec/schedulingGates' }, { op: 'add', path: '/spec/nodeSelector', value: { 'topology.kubernetes.io/zone': 'zone-a' } }]), { 'content-type': 'application/json-patch+json', accept: 'application/json' }],
    strategic: (n, rv) => [`/api/v1/namespaces/pc/pods/${n}`, JSON.stringify({ metadata: { resourceVersion: rv }, spec: { '$setElementOrder/schedulingGates': [], schedulingGates: [{ name: 'test/hold', $patch: 'delete' }], nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' } } }), { 'content-type': 'application/strategic-merge-patch+json', accept: 'application/json' }],
  };
  const res: Record<string, number[]> = {};
  let round = 0;
  for (let rep = 0; rep < Number(process.env.REPS ?? 2); rep++) for (const [v, make] of Object.entries(variants)) {
    round++;
    const names = Array.from({ length: N }, (_, i) => `p${round}-${i}`);
    const rvs = new Map<string, string>();
    await pool(names, 32, async (n) => { const r = await req('POST', '/api/v1/namespaces/pc/pods', podJson(n), { 'content-type': 'application/json', accept: 'application/json' }); rvs.set(n, JSON.parse(r.body.toString()).metadata.resourceVersion); });
    await new Promise((r) => setTimeout(r, 1000));
    const c0 = cp.cpuSeconds(); const t0 = Date.now();
    let bad = 0;
    await pool(names, 16, async (n) => { const [p, b, h] = make(n, rvs.get(n)!); const r = await req('PATCH', p, b, h); if (r.status !== 200) { bad++; if (bad < 3) console.log(v, r.status, r.body.toString().slice(0, 200)); } });
    const secs = (Date.now() - t0) / 1000; const c1 = cp.cpuSeconds();
    const api = (c1['kube-apiserver']! - c0['kube-apiserver']!), etcd = (c1['etcd']! - c0['etcd']!);
    console.log(`${v}: ${N} patches in ${secs.toFixed(2)} s, apiserver ${(api / N * 1000).toFixed(3)} ms/patch, etcd ${(etcd / N * 1000).toFixed(3)} ms, bad ${bad}`);
    (res[v] ??= []).push(api / N * 1000);
    await req('DELETE', '/api/v1/namespaces/pc/pods?labelSelector=app%3Dx', undefined, { accept: 'application/json' });
    await new Promise((r) => setTimeout(r, 2000));
  }
  for (const [v, xs] of Object.entries(res)) console.log(v, xs.map((x) => x.toFixed(3)).join(' '));
} finally {
  await cp.down();
}
process.exit(0);
