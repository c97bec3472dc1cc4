// The benchmark's server process: zonekeeper's real extender routes over a synthetic cluster,
// and its request histogram's sums (GET /duration) for the time spent inside zonekeeper.
import { Hono } from 'hono';
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { memorySource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { createExtender } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { extenderRoutes } from '../../src/server/extenderRoutes.js';
import { listen } from '../../src/server/listen.js';
import { benchCluster } from './cluster.js';

const nodes = Number(process.argv[2] ?? 5000);
const store = benchCluster(nodes);
const log = pino({ level: 'silent' });
const config = parseConfig({});
const metrics = createMetrics();
const source = memorySource(store, 'bench');
const extender = createExtender(decisionService({ source, actuator: memoryActuator(store, log, metrics), metrics, log, config }), { source, log, config });
const app = extenderRoutes(extender, metrics, log, config.extender);
const root = new Hono();
root.get('/duration', async (c) => {
  const out: Record<string, { sum: number; count: number }> = {};
  for (const v of (await metrics.requestDuration.get()).values) {
    const verb = String(v.labels.verb);
    const kind = v.metricName?.endsWith('_sum') ? 'sum' : v.metricName?.endsWith('_count') ? 'count' : undefined;
    if (kind) (out[verb] ??= { sum: 0, count: 0 })[kind] = v.value;
  }
  return c.json(out);
});
root.route('/', app);
const l = await listen(root, '127.0.0.1:0');
process.stdout.write(`${l.url}\n`);
process.on('SIGINT', () => process.exit(0));
