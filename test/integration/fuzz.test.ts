// A seeded fuzzer against a real `zonekeeper serve` process: requests mutated from the
// captured kube-scheduler requests in test/fixtures (and a pod-picker body), sent over HTTP.
// Every answer must be below 500, the process must stay up, and its memory must come back.
// ZK_FUZZ_SEED and ZK_FUZZ_REQUESTS change the run; a failure prints the seed and the input.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it, after, before } from 'node:test';
import { gzipSync } from 'node:zlib';
import { fixture } from '../support/app.js';
import { processMemory } from '../support/proc.js';
import { startServe } from '../support/serve.js';

const SEED = Number(process.env.ZK_FUZZ_SEED ?? 20261121);
const PER_VERB = Number(process.env.ZK_FUZZ_REQUESTS ?? 3000);

/** mulberry32: small, seeded, and the same on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DEEP = '~deep~';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

class Mutator {
  constructor(private readonly rnd: () => number) {}
  int(n: number): number { return Math.floor(this.rnd() * n); }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]!; }

  /** A hostile value: huge numbers, long or odd strings, deep nesting, wrong types. */
  value(): Json {
    switch (this.int(14)) {
      case 0: return null;
      case 1: return this.pick([0, -1, 1e9, 2 ** 31, 2 ** 53 + 1, 1e308, -1e308, 0.5]);
      case 2: return 'x'.repeat(this.pick([0, 1, 63, 64, 253, 254, 4096, 300_000]));
      case 3: return this.pick(['db-1000000000', 'db-2147483648', 'db-99999999999999999999', 'DB_0', 'a/b', '../..', '\u0000', '\u2028', 'é', '"', '%']);
      case 4: return this.pick([true, false]);
      case 5: return [];
      case 6: return {};
      // Deep nesting is spliced in as text after stringify: an object that deep would overflow this process first.
      case 7: return `${DEEP}${this.pick([10, 100, 5000, 50_000])}`;
      case 8: return Array.from({ length: this.pick([1, 100, 20_000]) }, (_, i) => `node-${i}`);
      case 9: return { name: this.value(), uid: this.value() };
      case 10: return String(this.int(2 ** 31));
      case 11: return Array.from({ length: this.int(5) }, () => ({ kind: this.pick(['StatefulSet', 'ReplicaSet', 'Job', '']), name: this.pick(['db', 'web-6c7d8bd9bc', 'x'.repeat(300)]), uid: 'u', controller: this.pick([true, false, 'yes']) }));
      case 12: return { 'apps.kubernetes.io/pod-index': this.pick(['0', '7', '2147483647', '2147483648', '-1', 'x']) };
      default: return this.int(1000);
    }
  }

  /** Every container (object or array) of a value, with the keys inside it. */
  private places(root: Json): { parent: Json[] | { [k: string]: Json }; key: string | number }[] {
    const out: { parent: Json[] | { [k: string]: Json }; key: string | number }[] = [];
    const stack: Json[] = [root];
    while (stack.length > 0 && out.length < 5000) {
      const v = stack.pop()!;
      if (Array.isArray(v)) v.forEach((x, i) => { out.push({ parent: v, key: i }); stack.push(x); });
      else if (v && typeof v === 'object') for (const k of Object.keys(v)) { out.push({ parent: v, key: k }); stack.push(v[k]!); }
    }
    return out;
  }

  /** A few structural mutations, then sometimes a textual one. */
  mutate(base: Json): string {
    const doc = structuredClone(base);
    for (let n = 1 + this.int(3); n > 0; n--) {
      const places = this.places(doc);
      if (places.length === 0) break;
      const { parent, key } = this.pick(places);
      const op = this.int(4);
      if (op === 0 && !Array.isArray(parent)) delete (parent as Record<string, Json>)[key as string];
      else if (op === 1 && !Array.isArray(parent)) (parent as Record<string, Json>)[this.pick(['uid', 'name', 'namespace', 'labels', 'ownerReferences', 'volumes', 'tolerations', 'NodeNames', 'Nodes', 'items', '__proto__', 'constructor'])] = this.value();
      else (parent as Record<string | number, Json>)[key] = this.value();
    }
    let text = JSON.stringify(doc).replace(new RegExp(`"${DEEP}(\\d+)"`, 'g'), (_, n) => `${'['.repeat(Number(n))}1${']'.repeat(Number(n))}`);
    switch (this.int(8)) {
      case 0: text = text.slice(0, this.int(text.length)); break;
      case 1: { const i = this.int(text.length); text = text.slice(0, i) + this.pick(['"', '{', ']', '\\', '\u0000', ',', 'ÿ']) + text.slice(i + 1); break; }
      default: break;
    }
    return text;
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function post(base: string, path: string, body: string | Buffer, headers: Record<string, string>): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const rss = (pid: number) => processMemory(pid).rss;

async function heapUsed(admin: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  return Number(/^zonekeeper_nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? NaN);
}

describe(`seeded fuzz of a real server (seed ${SEED}, ${PER_VERB} requests per verb)`, () => {
  let server: Awaited<ReturnType<typeof startServe>>;
  before(async () => { server = await startServe(['--demo']); });
  after(() => { server.child.kill('SIGKILL'); agent.destroy(); });

  it('no 5xx for any mutated request, the process stays up, memory comes back', async () => {
    const m = new Mutator(prng(SEED));
    const verbs: [string, string, Json][] = [
      ['filter', '/filter', fixture('filter-nodenames-statefulset-pod.json').body],
      ['filter', '/filter', fixture('filter-fullnodes-deployment-pod.json').body],
      ['prioritize', '/prioritize', fixture('prioritize-nodenames-statefulset-pod.json').body],
      ['prioritize', '/prioritize', fixture('prioritize-fullnodes-deployment-pod.json').body],
      ['picker', '/v1/downscale-pod-picker/default', { number_of_pods_requested: 2, candidate_pods: ['db-3', 'db-4', 'db-5', 'web-6c7d8bd9bc-4j759', 'web-6c7d8bd9bc-8xk2p'] }],
    ];
    // Warm up, then take the baseline.
    for (const [, path, base] of verbs) await post(server.extender, path, JSON.stringify(base), { 'content-type': 'application/json' });
    const rssBefore = rss(server.child.pid!);
    const heapBefore = await heapUsed(server.admin);
    const counts = new Map<string, Map<number, number>>();
    for (const verb of ['filter', 'prioritize', 'picker']) {
      const bases = verbs.filter(([v]) => v === verb);
      const statuses = new Map<number, number>();
      counts.set(verb, statuses);
      let i = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (i < PER_VERB) {
          i++;
          const [, path, base] = m.pick(bases);
          const text = m.mutate(base);
          const headers: Record<string, string> = { 'content-type': m.int(20) === 0 ? m.pick(['text/plain', 'application/xml', '']) : 'application/json' };
          let body: string | Buffer = text;
          if (m.int(15) === 0) {
            body = gzipSync(text);
            headers['content-encoding'] = 'gzip';
          }
          const status = await post(server.extender, path, body, headers);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status >= 500) assert.fail(`${verb} answered ${status} (seed ${SEED}) to: ${text.slice(0, 2000)}`);
        }
      }));
    }
    const health = await fetch(`${server.admin}/healthz`);
    assert.equal(health.status, 200, 'alive');
    assert.equal(server.child.exitCode, null);
    // Memory: V8 collects what the requests left as the process goes on; each look at /metrics is
    // a little more work for it, and a bounded number of looks must find the heap back.
    let heapAfter = await heapUsed(server.admin);
    for (let look = 0; look < 200 && heapAfter >= heapBefore + 64 * 2 ** 20; look++) heapAfter = await heapUsed(server.admin);
    const rssAfter = rss(server.child.pid!);
    const summary = [...counts].map(([v, s]) => `${v} ${[...s].sort().map(([c, n]) => `${c}×${n}`).join(' ')}`).join('; ');
    console.log(`# fuzz: ${PER_VERB * 3} requests; ${summary}; heap ${(heapBefore / 2 ** 20).toFixed(0)} → ${(heapAfter / 2 ** 20).toFixed(0)} MiB, RSS ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssAfter / 2 ** 20).toFixed(0)} MiB`);
    for (const [verb, s] of counts) assert.ok((s.get(200) ?? 0) > 0 && (s.get(400) ?? 0) > 0, `${verb}: both answers and refusals (${[...s]})`);
    assert.ok(heapAfter < heapBefore + 64 * 2 ** 20, `heap ${heapBefore} → ${heapAfter}`);
    assert.ok(rssAfter < rssBefore + 256 * 2 ** 20, `RSS ${rssBefore} → ${rssAfter}`);
  });
});
