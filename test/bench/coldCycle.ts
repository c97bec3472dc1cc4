// One scheduling cycle with the CPU's caches emptied before every call, in this process.
// Under kube-scheduler a request costs what it touches: between two pods kube-scheduler and
// kube-apiserver evict zonekeeper's data, and the same filter costs two to three times what
// it costs back to back. Over loopback on an otherwise idle machine the caches stay warm, so
// the large case cannot show that; this case can. Its figures still move by about a fifth
// from one process to the next (heap layout), where the HTTP cases swing by a third or more:
// compare code by alternating runs of both.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { slimPod } from '../../src/cluster/convert.js';
import { memorySource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { createExtender } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { parseArgs } from '../../src/extender/wire/args.js';
import { interleavedChunks } from '../support/nodeOrder.js';
import { benchCluster, nodeName, rawPod } from './cluster.js';
import { fmt, podBody } from './measure.js';

const NODES = 5000;
/** Other pods in the cache: a realistic heap and string table (JSON.parse internalizes short strings into it). */
const OTHER_PODS = 150_000;
const ORDERS = 8;
const ROUNDS = 400;
/** Larger than any last-level cache this runs on. */
const EVICT_BYTES = 48 * 2 ** 20;

export interface ColdCycleResult { filter: number; cycle: number; echoCycle: number }

export async function coldCycleCase(): Promise<ColdCycleResult> {
  const store = benchCluster(NODES);
  for (let i = 0; i < OTHER_PODS; i++) {
    const p = rawPod(i, { kind: 'ReplicaSet', name: `web-${i % 3000}-6c7d8bd9bc` }, nodeName(i % NODES));
    p.metadata.name = `web-${i}`;
    p.metadata.uid = `pod-${i}`;
    store.upsert('pods', slimPod(JSON.parse(JSON.stringify(p))));
  }
  const log = pino({ level: 'silent' });
  const metrics = createMetrics();
  const config = parseConfig({});
  const source = memorySource(store, 'bench');
  const ext = createExtender(decisionService({ source, actuator: memoryActuator(store, log, metrics), metrics, log, config }), { source, log, config });
  const all = Array.from({ length: NODES }, (_, i) => nodeName(i));
  const filters = Array.from({ length: ORDERS }, (_, k) => podBody(4, interleavedChunks(all, k + 1)));
  // Prioritize after each filter carries the names it passed, written as the filter wrote them.
  const prioritizes: string[] = [];
  for (const f of filters) prioritizes.push(podBody(4, JSON.parse(await ext.filter(parseArgs(f))).NodeNames));

  let turn = 0;
  const steps = {
    filter: async () => { await ext.filter(parseArgs(filters[turn++ % ORDERS]!)); },
    cycle: async () => {
      const k = turn++ % ORDERS;
      await ext.filter(parseArgs(filters[k]!));
      ext.prioritize(parseArgs(prioritizes[k]!, undefined, ext.answeredNames()));
    },
  };
  const junk = new Uint8Array(EVICT_BYTES);
  let sink = 0;
  const evict = () => { for (let i = 0; i < junk.length; i += 64) sink += junk[i]!++; };
  const times: Record<keyof typeof steps, number[]> = { filter: [], cycle: [] };
  for (let round = 0; round < ROUNDS + 100; round++) {
    for (const name of Object.keys(steps) as (keyof typeof steps)[]) {
      evict();
      const t = performance.now();
      await steps[name]();
      if (round >= 100) times[name].push((performance.now() - t) * 1000);
    }
  }
  if (sink < 0) throw new Error('unreachable');
  const median = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1]!;
  // The echo in a small process of its own: in this one its JSON.parse would internalize into
  // zonekeeper's string table, and pay for it.
  const echo = spawn(process.execPath, ['--import', 'tsx', new URL('./coldEcho.ts', import.meta.url).pathname, ...[NODES, ORDERS, ROUNDS, EVICT_BYTES].map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [out] = (await once(echo.stdout!, 'data')) as [Buffer];
  return { filter: median(times.filter), cycle: median(times.cycle), echoCycle: Number(String(out).trim()) };
}

export function printColdCycle(r: ColdCycleResult): void {
  console.log(`cold cycle, in-process: ${NODES} cached nodes + ${OTHER_PODS} other pods, names interleaved as kube-scheduler sends them, ${fmt(EVICT_BYTES / 2 ** 20, 0)} MiB walked before every call, medians of ${ROUNDS}`);
  console.log(`filter ${fmt(r.filter, 0)} us; cycle (filter, then prioritize with its answer) ${fmt(r.cycle, 0)} us; the echo's work for the same two bodies, in its own process, ${fmt(r.echoCycle, 0)} us; echo / cycle ${fmt(r.echoCycle / r.cycle, 2)}`);
}
