// Latency and throughput of one route over real HTTP on loopback, shared by the bench cases.
import http from 'node:http';
import { processCpuSeconds } from '../support/proc.js';
import { nodeName, rawNode, rawPod } from './cluster.js';

export const LATENCY_REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
export const THROUGHPUT_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
export const CONCURRENCY = 8;

export const fmt = (n: number, d = 3) => n.toFixed(d);

export const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

export function post(base: URL, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** CPU time (µs) of any local process, from /proc (clock ticks of 10 ms: measure over seconds). */
export function procCpu(pid: number): () => number {
  return () => processCpuSeconds(pid) * 1e6;
}

/** `cpuPerRequest`: over the sequential requests; `cpuPerRequestLoaded`: over the concurrent ones. */
export interface Measured { median: number; p99: number; rps: number; cpuPerRequest: number; cpuPerRequestLoaded: number }

/** `cpu`: reads the server's CPU time in µs, for the CPU per request. */
export function measure(base: URL, path: string, body: string, cpu?: () => number | Promise<number>): Promise<Measured> {
  return measureCalls(() => post(base, path, body), cpu);
}

/** Latency and throughput of `call` (one request, or a sequence that counts as one), throughput over `concurrency` callers. */
export async function measureCalls(call: () => Promise<unknown>, cpu?: () => number | Promise<number>, concurrency = CONCURRENCY): Promise<Measured> {
  const times: number[] = [];
  const cpuBefore = cpu ? await cpu() : 0;
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const t = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const cpuPerRequest = cpu ? ((await cpu()) - cpuBefore) / LATENCY_REQUESTS : NaN;
  times.sort((a, b) => a - b);
  let done = 0;
  const cpuLoaded = cpu ? await cpu() : 0;
  const until = Date.now() + THROUGHPUT_SECONDS * 1000;
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      await call();
      done++;
    }
  }));
  const seconds = (Date.now() - started) / 1000;
  const cpuPerRequestLoaded = cpu ? ((await cpu()) - cpuLoaded) / done : NaN;
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99), rps: done / seconds, cpuPerRequest, cpuPerRequestLoaded };
}

/** `names`: how many node names to send, or the names themselves. */
export function podBody(ordinal: number, names: number | string[] | undefined, fullNodes?: number, unmanaged = false): string {
  const pod = rawPod(ordinal, { kind: 'StatefulSet', name: 'db' });
  pod.metadata.namespace = 'default';
  pod.spec.volumes = [];
  if (unmanaged) pod.metadata.ownerReferences = [];
  if (fullNodes) return JSON.stringify({ Pod: pod, Nodes: { items: Array.from({ length: fullNodes }, (_, i) => rawNode(i)) }, NodeNames: null });
  return JSON.stringify({ Pod: pod, Nodes: null, NodeNames: Array.isArray(names) ? names : Array.from({ length: names! }, (_, i) => nodeName(i)) });
}
