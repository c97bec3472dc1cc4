// The echo extender's work for one scheduling cycle, cold, in a process of its own (as the
// e2e's echo runs): parse the filter body and answer every third name, then parse the
// prioritize body. Run by coldCycle.ts; prints its median in microseconds.
import { interleavedChunks } from '../support/nodeOrder.js';
import { nodeName } from './cluster.js';
import { podBody } from './measure.js';

const [nodes, orders, rounds, evictBytes] = process.argv.slice(2).map(Number) as [number, number, number, number];
const all = Array.from({ length: nodes }, (_, i) => nodeName(i));
const filters = Array.from({ length: orders }, (_, k) => podBody(4, interleavedChunks(all, k + 1)));
const prioritizes = filters.map((f) => podBody(4, (JSON.parse(f) as { NodeNames: string[] }).NodeNames.filter((_, i) => i % 3 === 0)));
const junk = new Uint8Array(evictBytes);
let sink = 0;
const times: number[] = [];
for (let round = 0; round < rounds + 100; round++) {
  for (let i = 0; i < junk.length; i += 64) sink += junk[i]!++;
  const k = round % orders;
  const t = performance.now();
  const args = JSON.parse(filters[k]!) as { NodeNames: string[] };
  sink += JSON.stringify({ NodeNames: args.NodeNames.filter((_, i) => i % 3 === 0), FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' }).length;
  sink += (JSON.parse(prioritizes[k]!) as { NodeNames: string[] }).NodeNames.length;
  if (round >= 100) times.push((performance.now() - t) * 1000);
}
process.stdout.write(`${times.sort((a, b) => a - b)[times.length >> 1]! + (sink < 0 ? 1 : 0)}\n`);
