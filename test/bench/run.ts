// npm run bench: extender latency and throughput over real HTTP on loopback, against a
// bare echo route in the same server process, and memory per cached slim pod.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { slimPod } from '../../src/cluster/convert.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { nodeName, rawPod } from './cluster.js';
import { deletionCostCase } from './deletionCosts.js';
import { largeClusterCase, printLargeCluster } from './largeCluster.js';
import { agent, CONCURRENCY, cpuRoute, fmt, LATENCY_REQUESTS, measure, podBody, post, THROUGHPUT_SECONDS } from './measure.js';
import { bodyLimitCases } from './limits.js';
import { coldCycleCase, printColdCycle } from './coldCycle.js';
import { layoutsCase } from './layouts.js';
import { healthCase } from './health.js';

const MAX_NODES = 5000;

function memoryPerPod(count: number): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const store = new ClusterStore();
  gc(); gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) {
    const owner = i % 2 ? { kind: 'ReplicaSet', name: `web-${i % 500}-6c7d8bd9bc` } : { kind: 'StatefulSet', name: `db-${i % 500}` };
    store.upsert('pods', slimPod(JSON.parse(JSON.stringify(rawPod(i, owner, nodeName(i % MAX_NODES))))));
  }
  gc(); gc();
  const after = process.memoryUsage().heapUsed;
  if (store.count('pods') !== count) throw new Error('pods lost');
  return (after - before) / count;
}


async function extenderCases() {
  const nodeFlags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', new URL('./server.ts', import.meta.url).pathname, String(MAX_NODES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const base = new URL(String(line).trim());
  console.log(`zonekeeper bench: server ${base.href} with ${MAX_NODES} cached nodes; ${LATENCY_REQUESTS} sequential requests for latency, ${CONCURRENCY} connections for ${THROUGHPUT_SECONDS}s for throughput`);
  console.log('case                               median ms   p99 ms    req/s  vs echo   server CPU us/req  capacity vs echo');
  const rows: [string, string, string][] = [];
  for (const n of [100, 1000, 5000]) rows.push([`filter     NodeNames ${n}`, '/filter', podBody(4, n)], [`prioritize NodeNames ${n}`, '/prioritize', podBody(4, n)], [`echo       NodeNames ${n}`, '/echo', podBody(4, n)]);
  // The same 5,000 names for a pod no policy covers: every node passes, no reasons to send.
  rows.push([`filter unmanaged pod, 5000`, '/filter', podBody(4, 5000, undefined, true)]);
  rows.push([`filter     full Nodes 1000`, '/filter', podBody(4, undefined, 1000)], [`prioritize full Nodes 1000`, '/prioritize', podBody(4, undefined, 1000)]);
  // Warm every route up first, so the JIT has settled before anything is timed.
  for (let round = 0; round < 300; round++) for (const [, path, body] of rows) await post(base, path, body);
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  for (const [label, path, body] of rows) results.set(label, await measure(base, path, body, cpuRoute(base)));
  for (const [label] of rows) {
    const r = results.get(label)!;
    const n = label.match(/(?:NodeNames|pod,) (\d+)/)?.[1];
    const echo = n ? results.get(`echo       NodeNames ${n}`) : undefined;
    const ratio = echo && !label.startsWith('echo') ? fmt(r.rps / echo.rps, 2) : '';
    const capacity = echo && !label.startsWith('echo') ? fmt(echo.cpuPerRequest / r.cpuPerRequest, 2) : '';
    console.log(`${label.padEnd(34)} ${fmt(r.median).padStart(9)} ${fmt(r.p99).padStart(8)} ${fmt(r.rps, 0).padStart(8)} ${ratio.padStart(8)} ${fmt(r.cpuPerRequest, 0).padStart(19)} ${capacity.padStart(17)}`);
  }
  child.kill();
  const perPod = memoryPerPod(50_000);
  console.log(`memory per cached slim pod (50,000 pods): ${fmt(perPod, 0)} bytes (target <= 1024)`);
  const f5000 = results.get('filter     NodeNames 5000')!;
  const e5000 = results.get('echo       NodeNames 5000')!;
  console.log(`targets: filter p99 at 5000 names ${fmt(f5000.p99)} ms (< 2 ms); throughput vs echo at 5000 names ${fmt(f5000.rps / e5000.rps, 2)} (>= 0.70); memory ${fmt(perPod, 0)} B/pod (<= 1024)`);
}

// BENCH_CASES=extender,limits,large,costs,layouts,health,cold picks cases (all by default).
const CASES = new Set((process.env.BENCH_CASES ?? 'extender,limits,large,costs,layouts,health,cold').split(','));

async function main() {
  if (CASES.has('extender')) await extenderCases();
  if (CASES.has('costs')) deletionCostCase();
  if (CASES.has('layouts')) await layoutsCase();
  if (CASES.has('health')) await healthCase();
  if (CASES.has('large')) printLargeCluster(await largeClusterCase());
  if (CASES.has('cold')) printColdCycle(await coldCycleCase());
  agent.destroy();
  if (CASES.has('limits')) await bodyLimitCases();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
