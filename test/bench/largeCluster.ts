// The 5,000-node, 150,000-pod case (issue 11): zonekeeper as users run it, a `serve` process
// listing and watching a list/watch server on loopback, then answering filter and prioritize
// with all 5,000 names, beside a bare node:http echo process (the floor: JSON.parse the args,
// answer the names back).
import http from 'node:http';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEchoExtender } from '../support/echoExtender.js';
import { interleavedChunks } from '../support/nodeOrder.js';
import { processCpuSeconds, processMemory } from '../support/proc.js';
import { startServe } from '../support/serve.js';
import { kubeletNode, nodeName, rawPod, ZONES } from './cluster.js';
import { fmt, measureCalls, podBody, post, procCpu, type Measured } from './measure.js';
import { target } from './targets.js';

/** Node flags for `zonekeeper serve`: as the image and `npm start` run it. */
const SERVE_FLAGS = process.env.BENCH_SERVER_FLAGS ?? '--max-semi-space-size=32';
const NODES = 5000;
const PODS = 150_000;
const PAGE = 500;
const WARMUP_ROUNDS = 300;
/** Name orders sent in turn, and the run length kube-scheduler's workers take (√5,000). */
const ORDERS = 8;

type Raw = Record<string, any>;

/** The cluster's objects as list pages, serialized once: the server then costs what a real API server's watch cache costs. */
function listPages(): Map<string, Buffer[]> {
  const pages = new Map<string, Buffer[]>();
  const paged = (path: string, count: number, make: (i: number) => Raw) => {
    const out: Buffer[] = [];
    for (let start = 0; start < count || out.length === 0; start += PAGE) {
      const items = Array.from({ length: Math.max(0, Math.min(PAGE, count - start)) }, (_, k) => make(start + k));
      const cont = start + PAGE < count ? String(start + PAGE) : '';
      out.push(Buffer.from(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1000', continue: cont }, items })));
    }
    pages.set(path, out);
  };
  paged('/api/v1/nodes', NODES, kubeletNode);
  // One pinned StatefulSet `db` of 300 in default; the rest StatefulSet and ReplicaSet pods of 500 workloads in 20 namespaces.
  paged('/api/v1/pods', PODS, (i) => {
    if (i < 300) {
      const p = rawPod(i, { kind: 'StatefulSet', name: 'db' }, nodeName(i % NODES));
      p.metadata.namespace = 'default';
      return p;
    }
    const owner = i % 2 ? { kind: 'ReplicaSet', name: `web-${i % 250}-6c7d8bd9bc` } : { kind: 'StatefulSet', name: `store-${i % 250}` };
    return rawPod(i, owner, nodeName(i % NODES));
  });
  paged('/apis/apps/v1/statefulsets', 1, () => ({
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'default', uid: 'sts-db', annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }, spec: { replicas: 300 },
  }));
  for (const path of ['/api/v1/persistentvolumes', '/api/v1/persistentvolumeclaims', '/apis/storage.k8s.io/v1/storageclasses', '/apis/apps/v1/replicasets', '/apis/apps/v1/deployments', '/apis/batch/v1/jobs']) paged(path, 0, () => ({}));
  return pages;
}

/** Serves the pages (limit/continue) and watches that only send a bookmark; counts bytes listed. */
async function listWatchServer(pages: Map<string, Buffer[]>) {
  let bytes = 0;
  const watches = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const list = pages.get(url.pathname);
    if (!list) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{"kind":"Status","code":404}');
    }
    if (url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write('{"type":"BOOKMARK","object":{"kind":"Bookmark","metadata":{"resourceVersion":"1000"}}}\n');
      watches.add(res);
      res.on('close', () => watches.delete(res));
      return;
    }
    const page = list[Math.floor(Number(url.searchParams.get('continue') || 0) / PAGE)]!;
    bytes += page.length;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': page.length });
    res.end(page);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'zk-bench-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: b, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: b, user: u}}]\ncurrent-context: c\n`);
  return {
    kubeconfig, bytes: () => bytes, base: `http://127.0.0.1:${port}`,
    close() {
      for (const w of watches) w.destroy();
      server.close();
    },
  };
}

const rssMiB = (pid: number) => processMemory(pid).rss / 2 ** 20;

async function readyAfter(admin: string, started: number, logs: string[]): Promise<number> {
  for (;;) {
    const res = await fetch(new URL('/readyz', admin)).catch(() => undefined);
    if (res?.status === 200) return (Date.now() - started) / 1000;
    if (Date.now() - started > 120_000) throw new Error(`not ready after 120 s: ${await res?.text()}\n${logs.slice(-10).join('\n')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** CPU seconds (user + system) this process has used: the list server's share of a sync. */
const ownCpuSeconds = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e6; };

interface Floor { seconds: number; cpu: number; serverCpu: number }

/** listFloor.ts paging `paths` from `base`, spawn to exit: the cold sync's floor, its CPU and the list server's meanwhile. */
async function listFloor(base: string, paths: string[], expected: number): Promise<Floor> {
  const started = performance.now();
  const serverCpu = ownCpuSeconds();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./listFloor.ts', import.meta.url).pathname, base, ...paths], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [out] = (await once(child.stdout!, 'data')) as [Buffer];
  await once(child, 'exit');
  const [objects, cpu] = String(out).trim().split(' ').map(Number);
  if (objects !== expected) throw new Error(`list floor read ${String(out).trim()} objects, not ${expected}`);
  return { seconds: (performance.now() - started) / 1000, cpu: cpu!, serverCpu: ownCpuSeconds() - serverCpu };
}

export interface LargeClusterResult {
  syncSeconds: number; rss: number; listedMiB: number;
  /** The list floor (median of 3 runs, before zonekeeper starts). */
  floorSeconds: number;
  /** CPU seconds: zonekeeper's from spawn to ready, the list server's meanwhile, and the same for the median floor run. */
  cpu: { sync: number; syncServer: number; floor: number; floorServer: number };
  filter: Measured; prioritize: Measured; echo: Measured; responseKB: number;
  /** Filter, then prioritize with the names it passed; the echo answering the same two bodies. */
  schedulingCycle: Measured; echoPair: Measured; passed: number;
}

export async function largeClusterCase(): Promise<LargeClusterResult> {
  const pages = listPages();
  const api = await listWatchServer(pages);
  const objects = NODES + PODS + 1;
  const floors: Floor[] = [];
  for (let round = 0; round < 3; round++) floors.push(await listFloor(api.base, [...pages.keys()], objects));
  const floor = floors.sort((a, b) => a.seconds - b.seconds)[1]!;
  const floorSeconds = floor.seconds;
  const floorBytes = api.bytes();
  const { url: echoBase, child: echoChild } = await startEchoExtender();
  const started = Date.now();
  const serverCpu = ownCpuSeconds();
  const zk = await startServe(['--kubeconfig', api.kubeconfig], SERVE_FLAGS.split(' ').filter(Boolean));
  try {
    const syncSeconds = await readyAfter(zk.admin, started, zk.logs);
    const cpu = { sync: processCpuSeconds(zk.child.pid!), syncServer: ownCpuSeconds() - serverCpu, floor: floor.cpu, floorServer: floor.serverCpu };
    await new Promise((r) => setTimeout(r, 2000));
    const rss = rssMiB(zk.child.pid!);
    const ext = new URL(zk.extender);
    // kube-scheduler's filter workers append the nodes that pass concurrently: each request's
    // names come interleaved, differently each time (nodeOrder.ts).
    const bodies = Array.from({ length: ORDERS }, (_, k) => podBody(4, interleavedChunks(Array.from({ length: NODES }, (_, i) => nodeName(i)), k + 1)));
    const filtered: string[] = [];
    for (const b of bodies) filtered.push(await (await fetch(new URL('/filter', ext), { method: 'POST', body: b, headers: { 'content-type': 'application/json' } })).text());
    const answer = filtered[0]!;
    if (!answer.includes('"NodeNames":[')) throw new Error(`filter answered ${answer.slice(0, 200)}`);
    // A scheduling cycle as kube-scheduler runs it: filter with every name, then prioritize
    // with the names the filter passed (in its order), beside the echo answering both bodies.
    const passedBodies = filtered.map((a) => podBody(4, (JSON.parse(a) as { NodeNames: string[] }).NodeNames));
    let turn = 0;
    const next = () => turn++ % ORDERS;
    const filterCall = () => post(ext, '/filter', bodies[next()]!);
    const prioritizeCall = () => post(ext, '/prioritize', bodies[next()]!);
    const echoCall = () => post(echoBase, '/echo', bodies[next()]!);
    const cycle = async () => {
      const k = next();
      await post(ext, '/filter', bodies[k]!);
      await post(ext, '/prioritize', passedBodies[k]!);
    };
    const echoCycle = async () => {
      const k = next();
      await post(echoBase, '/echo', bodies[k]!);
      await post(echoBase, '/echo', passedBodies[k]!);
    };
    // As the small-cache case does: the JIT settles and the sync's garbage is collected before
    // anything is timed (the first 1,500 filters after sync otherwise pay both).
    for (let round = 0; round < WARMUP_ROUNDS; round++) {
      for (const call of [filterCall, prioritizeCall, echoCall]) await call();
      await cycle();
      await echoCycle();
    }
    const filter = await measureCalls(filterCall, procCpu(zk.child.pid!));
    const prioritize = await measureCalls(prioritizeCall, procCpu(zk.child.pid!));
    const echo = await measureCalls(echoCall, procCpu(echoChild.pid!));
    // One caller: kube-scheduler runs one scheduling cycle at a time.
    const schedulingCycle = await measureCalls(cycle, procCpu(zk.child.pid!), 1);
    const echoPair = await measureCalls(echoCycle, procCpu(echoChild.pid!), 1);
    return { syncSeconds, floorSeconds, cpu, rss, listedMiB: (api.bytes() - floorBytes) / 2 ** 20, filter, prioritize, echo, schedulingCycle,
      echoPair, passed: passedBodies[0]!.length, responseKB: Buffer.byteLength(answer) / 1000 };
  } finally {
    zk.child.kill('SIGTERM');
    await once(zk.child, 'exit');
    // BENCH_SERVER_LOG=file keeps what the server printed (with BENCH_SERVER_FLAGS=--trace-gc, its collections).
    if (process.env.BENCH_SERVER_LOG) writeFileSync(process.env.BENCH_SERVER_LOG, zk.logs.join('\n'));
    echoChild.kill();
    api.close();
  }
}

export function printLargeCluster(r: LargeClusterResult): void {
  console.log(`\n${NODES} kubelet Nodes + ${PODS} Pods listed and watched from a list/watch server on loopback by \`zonekeeper serve\`; filter/prioritize with ${NODES} names vs a bare node:http echo process`);
  console.log(`cold sync to /readyz 200: ${fmt(r.syncSeconds, 2)} s, ${fmt(r.listedMiB, 1)} MiB listed; RSS after sync ${fmt(r.rss, 0)} MiB`);
  console.log(`after ${WARMUP_ROUNDS} warm-up rounds of each route; server CPU per request from /proc, over the sequential and over the concurrent requests`);
  console.log('case                 median ms   p99 ms    req/s  vs echo  server CPU us/req: sequential  concurrent');
  const row = (label: string, m: Measured, echo?: Measured) => console.log(`${label.padEnd(20)} ${fmt(m.median).padStart(9)} ${fmt(m.p99).padStart(8)} ${fmt(m.rps, 0).padStart(8)} ${(echo ? fmt(m.rps / echo.rps, 2) : '').padStart(8)} ${fmt(m.cpuPerRequest, 0).padStart(29)} ${fmt(m.cpuPerRequestLoaded, 0).padStart(11)}`);
  row('filter', r.filter, r.echo);
  row('prioritize', r.prioritize, r.echo);
  row('echo', r.echo);
  row('cycle', r.schedulingCycle, r.echoPair);
  row('echo cycle', r.echoPair);
  console.log(`names in chunks of ${Math.floor(Math.sqrt(NODES))} interleaved two at a time, ${ORDERS} orders in turn (as kube-scheduler's filter workers return them on 2 cores); cycle: filter with ${NODES} names, then prioritize with the names it passed (${fmt(r.passed / 1000, 0)} KB body), as kube-scheduler calls them, one cycle at a time; prioritize above: all ${NODES} names, no filter before it`);
  console.log(`list floor (a process paging the same lists at limit ${PAGE}, JSON.parse, keeping nothing; median of 3): ${fmt(r.floorSeconds, 2)} s; zonekeeper's sync / floor ${fmt(r.syncSeconds / r.floorSeconds, 2)}`);
  console.log(`CPU seconds (this machine has ${availableParallelism()} CPUs): zonekeeper's sync ${fmt(r.cpu.sync, 2)} (main and decoder threads), the list server meanwhile ${fmt(r.cpu.syncServer, 2)}; the floor ${fmt(r.cpu.floor, 2)}, the list server meanwhile ${fmt(r.cpu.floorServer, 2)}; sync / floor in CPU ${fmt(r.cpu.sync / r.cpu.floor, 2)}`);
  const at = '5,000 nodes, 150,000 pods:';
  target(`${at} filter req/s / echo process`, r.filter.rps / r.echo.rps, 0.9, false);
  target(`${at} prioritize req/s / echo process`, r.prioritize.rps / r.echo.rps, 0.8, false);
  target(`${at} filter p99 / echo p99`, r.filter.p99 / r.echo.p99, 1.3, true);
  target(`${at} filter median`, r.filter.median, 1.5, true, ' ms');
  target(`${at} cycle / echo cycle (req/s)`, r.schedulingCycle.rps / r.echoPair.rps, 0.6, false);
  target(`${at} cold sync to /readyz / list floor`, r.syncSeconds / r.floorSeconds, 1.2, true);
  target(`${at} RSS after sync`, r.rss, 400, true, ' MiB');
  target(`${at} filter response`, r.responseKB, 100, true, ' KB');
}
