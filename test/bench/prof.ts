// Profiles one filter/prioritize in-process: node --cpu-prof --import tsx test/bench/prof.ts [names]
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { memorySource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { createExtender } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { parseArgs } from '../../src/extender/wire/args.js';
import { candidatesNamed } from '../../src/placement/policy.js';
import { benchCluster, nodeName, rawPod } from './cluster.js';

const n = Number(process.argv[2] ?? 5000);
const store = benchCluster(5000);
const log = pino({ level: 'silent' });
const metrics = createMetrics();
const config = parseConfig({});
const source = memorySource(store, 'b');
const ext = createExtender(decisionService({ source, actuator: memoryActuator(store, log, metrics), metrics, log, config }), { source, log, config });
const pod = rawPod(4, { kind: 'StatefulSet', name: 'db' });
pod.metadata.namespace = 'default';
pod.spec.volumes = [];
const text = JSON.stringify({ Pod: pod, NodeNames: Array.from({ length: n }, (_, i) => nodeName(i)) });
const time = (label: string, f: () => unknown) => {
  for (let i = 0; i < 200; i++) f();
  const times: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(`${n} names ${label.padEnd(18)} median ${(times[500]! * 1000).toFixed(1)} us, mean ${(mean * 1000).toFixed(1)} us`);
};
time('JSON.parse', () => JSON.parse(text));
time('parseArgs', () => parseArgs(text));
const args = parseArgs(text);
time('filter', () => ext.filter(args));
time('prioritize', () => ext.prioritize(args));
if (process.argv[3] === 'parts') {
  const { filterNodes } = await import('../../src/placement/filtering.js');
  const { encodeFilterResult } = await import('../../src/extender/wire/encoding.js');
  const { summarizeRejections } = await import('../../src/decision/decisions.js');
  const { Reservations } = await import('../../src/decision/reservationLedger.js');
  const { pendingPod } = await import('../../src/cluster/convert.js');
  const settings = { ...parseConfig({}).placement };
  const reservations = new Reservations(30);
  const input = () => ({
    pod: pendingPod(args.Pod), candidates: candidatesNamed(args.NodeNames!, store), snapshot: store, reservations, settings,
    now: Date.now(), waitingSince: undefined, pendingFreezes: { get: () => undefined, values: () => [] }, unschedulableSubsets: new Map<string, number>(),
  });
  time('input', input);
  const inp = input();
  time('filterNodes', () => filterNodes(inp));
  const v = filterNodes(inp);
  time('encode', () => encodeFilterResult(v, undefined, { legacyFailedNodes: false }).length);
  time('summarize', () => summarizeRejections(v));
  const { scoreNodes } = await import('../../src/placement/scoring.js');
  const { encodePriorities } = await import('../../src/extender/wire/encoding.js');
  time('scoreNodes', () => scoreNodes(inp, v));
  const scores = scoreNodes(inp, v);
  time('encodePriorities', () => encodePriorities(inp.candidates.names, scores, (i) => inp.candidates.nodes[i] !== undefined).length);
}
