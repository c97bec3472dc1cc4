// npm run bench: extender latency and throughput over real HTTP on loopback against a bare
// echo process, memory per cached slim pod, the larger cases; then every target, met or not.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { slimPod } from '../../src/cluster/convert.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { nodeName, rawPod } from './cluster.js';
import { deletionCostCase } from './deletionCosts.js';
import { largeClusterCase, printLargeCluster } from './largeCluster.js';
import { agent, CONCURRENCY, fmt, LATENCY_REQUESTS, measure, podBody, post, procCpu, THROUGHPUT_SECONDS } from './measure.js';
import { startEchoExtender } from '../support/echoExtender.js';
import { printTargets, target } from './targets.js';
import { bodyLimitCases } from './limits.js';
import { coldCycleCase, printColdCycle } from './coldCycle.js';
import { layoutsCase } from './layouts.js';
import { healthCase } from './health.js';
import { gateCase } from './gate.js';
import { hostileCase } from './hostile.js';
import { admissionCase } from './admission.js';
import { federationPlansCase } from './federationPlans.js';
import { karmadaLiveCase } from './karmadaLive.js';

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

/** Sum (s) and count of zonekeeper_request_duration_seconds per verb, from the bench server. */
async function durations(base: URL): Promise<Record<string, { sum: number; count: number }>> {
  return (await fetch(new URL('/duration', base))).json() as Promise<Record<string, { sum: number; count: number }>>;
}

/** Mean time inside zonekeeper per filter and per prioritize (ms), in scheduling cycles: filter, then prioritize with the names it passed. */
async function ownTimePerVerb(base: URL, names: number): Promise<{ filter: number; prioritize: number }> {
  const body = podBody(4, names);
  const answer = await (await fetch(new URL('/filter', base), { method: 'POST', body, headers: { 'content-type': 'application/json' } })).json() as { NodeNames: string[] };
  const passed = podBody(4, answer.NodeNames);
  const cycle = async () => {
    await post(base, '/filter', body);
    await post(base, '/prioritize', passed);
  };
  for (let i = 0; i < 300; i++) await cycle();
  const before = await durations(base);
  for (let i = 0; i < LATENCY_REQUESTS; i++) await cycle();
  const after = await durations(base);
  const mean = (verb: string) => ((after[verb]!.sum - before[verb]!.sum) / (after[verb]!.count - before[verb]!.count)) * 1000;
  return { filter: mean('filter'), prioritize: mean('prioritize') };
}

async function extenderCases() {
  const nodeFlags = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', new URL('./server.ts', import.meta.url).pathname, String(MAX_NODES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const base = new URL(String(line).trim());
  const echo = await startEchoExtender();
  console.log(`zonekeeper bench: server ${base.href} with ${MAX_NODES} cached nodes, a bare node:http echo in its own process; ${LATENCY_REQUESTS} sequential requests for latency, ${CONCURRENCY} connections for ${THROUGHPUT_SECONDS}s for throughput`);
  console.log('case                               median ms   p99 ms    req/s  vs echo   server CPU us/req  capacity vs echo');
  const zk = { base, cpu: procCpu(child.pid!) };
  const floor = { base: echo.url, cpu: procCpu(echo.child.pid!) };
  const rows: [string, typeof zk, string, string][] = [];
  for (const n of [100, 1000, 5000]) rows.push([`filter     NodeNames ${n}`, zk, '/filter', podBody(4, n)], [`prioritize NodeNames ${n}`, zk, '/prioritize', podBody(4, n)], [`echo       NodeNames ${n}`, floor, '/echo', podBody(4, n)]);
  // The same 5,000 names for a pod no policy covers: every node passes, no reasons to send.
  rows.push(['filter unmanaged pod, 5000', zk, '/filter', podBody(4, 5000, undefined, true)]);
  rows.push(['filter     full Nodes 1000', zk, '/filter', podBody(4, undefined, 1000)], ['prioritize full Nodes 1000', zk, '/prioritize', podBody(4, undefined, 1000)]);
  // Warm every route up first, so the JIT has settled before anything is timed.
  for (let round = 0; round < 300; round++) for (const [, to, path, body] of rows) await post(to.base, path, body);
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  for (const [label, to, path, body] of rows) results.set(label, await measure(to.base, path, body, to.cpu));
  for (const [label] of rows) {
    const r = results.get(label)!;
    const n = label.match(/(?:NodeNames|pod,) (\d+)/)?.[1];
    const echoRow = n ? results.get(`echo       NodeNames ${n}`) : undefined;
    const ratio = echoRow && !label.startsWith('echo') ? fmt(r.rps / echoRow.rps, 2) : '';
    const capacity = echoRow && !label.startsWith('echo') ? fmt(echoRow.cpuPerRequest / r.cpuPerRequest, 2) : '';
    console.log(`${label.padEnd(34)} ${fmt(r.median).padStart(9)} ${fmt(r.p99).padStart(8)} ${fmt(r.rps, 0).padStart(8)} ${ratio.padStart(8)} ${fmt(r.cpuPerRequest, 0).padStart(19)} ${capacity.padStart(17)}`);
  }
  const own = await ownTimePerVerb(base, 100);
  console.log(`inside zonekeeper (its request histogram), scheduling cycles at 100 names: filter ${fmt(own.filter)} ms, prioritize with the names the filter passed ${fmt(own.prioritize)} ms`);
  child.kill();
  echo.child.kill();
  const perPod = memoryPerPod(50_000);
  console.log(`memory per cached slim pod (50,000 pods): ${fmt(perPod, 0)} bytes`);
  const f5000 = results.get('filter     NodeNames 5000')!;
  const e5000 = results.get('echo       NodeNames 5000')!;
  target('5,000 cached nodes: filter p99 at 5,000 names', f5000.p99, 2, true, ' ms');
  target('5,000 cached nodes: filter req/s / echo process at 5,000 names', f5000.rps / e5000.rps, 0.7, false);
  target('100 names: time inside zonekeeper per filter', own.filter, 0.5, true, ' ms');
  target('100 names: time inside zonekeeper per prioritize', own.prioritize, 0.5, true, ' ms');
  target('memory per cached slim pod', perPod, 1024, true, ' B');
}

// BENCH_CASES=extender,admission,limits,large,costs,layouts,health,gate,cold,hostile,karmada picks cases (all by default);
// karmada-live (a real Karmada and five members beside karmada-scheduler, several minutes) only when named.
const CASES = new Set((process.env.BENCH_CASES ?? 'extender,admission,limits,large,costs,layouts,health,gate,cold,hostile,karmada').split(','));

async function main() {
  if (CASES.has('extender')) await extenderCases();
  if (CASES.has('admission')) await admissionCase();
  if (CASES.has('costs')) deletionCostCase();
  if (CASES.has('layouts')) await layoutsCase();
  if (CASES.has('health')) await healthCase();
  if (CASES.has('gate')) await gateCase();
  if (CASES.has('hostile')) await hostileCase();
  if (CASES.has('karmada')) federationPlansCase();
  if (CASES.has('karmada-live')) await karmadaLiveCase();
  if (CASES.has('large')) printLargeCluster(await largeClusterCase());
  if (CASES.has('cold')) printColdCycle(await coldCycleCase());
  agent.destroy();
  if (CASES.has('limits')) await bodyLimitCases();
  printTargets();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
