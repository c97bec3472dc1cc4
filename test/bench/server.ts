// The benchmark's server process: zonekeeper's real extender routes over a synthetic
// cluster, plus a bare hono route that only echoes NodeNames (the baseline).
import { Hono } from 'hono';
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { memorySource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/config.js';
import { createExtender } from '../../src/extender/extender.js';
import { createMetrics } from '../../src/metrics.js';
import { extenderRoutes } from '../../src/server/extenderRoutes.js';
import { listen } from '../../src/server/listen.js';
import { benchCluster } from './cluster.js';

const nodes = Number(process.argv[2] ?? 5000);
const store = benchCluster(nodes);
const log = pino({ level: 'silent' });
const config = parseConfig({});
const metrics = createMetrics();
const source = memorySource(store, 'bench');
const extender = createExtender({ source, actuator: memoryActuator(store, log, metrics), metrics, log, config });
const app = extenderRoutes(extender, metrics, log, config.extender);
const echo = new Hono();
echo.post('/echo', async (c) => {
  const body = JSON.parse(await c.req.text());
  return c.json({ NodeNames: body.NodeNames, FailedNodes: {}, Error: '' });
});
const root = new Hono();
// CPU the server process has used: the load generator shares the machine, so req/s alone
// says as much about the client as about the server.
root.get('/cpu', (c) => c.json(process.cpuUsage()));
root.route('/', echo);
root.route('/', app);
const l = await listen(root, '127.0.0.1:0');
process.stdout.write(`${l.url}\n`);
process.on('SIGINT', () => process.exit(0));
