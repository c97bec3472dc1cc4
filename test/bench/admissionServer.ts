// The admission bench's server process: zonekeeper's real admission routes over HTTPS, over a
// cluster of `nodes` nodes and 150,000 pods, deciding as the Lease holder.
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import { addObject, memorySource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService } from '../../src/decision/service.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { admissionRoutes } from '../../src/admission/admissionRoutes.js';
import { listen } from '../../src/server/listen.js';
import { benchCluster, nodeName, rawPod, ZONES } from './cluster.js';
import { trustedCaller } from '../../src/http/callers.js';

const nodes = Number(process.argv[2] ?? 5000);
const pods = Number(process.argv[3] ?? 150_000);
const { cert, key } = JSON.parse(Buffer.from(process.env.ZK_BENCH_PKI!, 'base64').toString()) as { cert: string; key: string };
const store = benchCluster(nodes);
// A Deployment with zone preferences (balance reads its 300 pods' zones), and the rest of the 150,000 pods in 20 namespaces.
const preferences = JSON.stringify({ zones: Object.fromEntries(ZONES.map((z) => [z, { weight: 1 }])) });
addObject(store, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'dep-web', annotations: { 'zonekeeper.io/zone-preferences': preferences } }, spec: { replicas: 301 } });
addObject(store, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-rs', namespace: 'default', uid: 'rs-web', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'dep-web', controller: true }] }, spec: { replicas: 301 } });
for (let i = 300; i < pods; i++) {
  const web = i < 600;
  const p = rawPod(i, web ? { kind: 'ReplicaSet', name: 'web-rs' } : i % 2 ? { kind: 'ReplicaSet', name: `web-${i % 250}-6c7d8bd9bc` } : { kind: 'StatefulSet', name: `store-${i % 250}` }, nodeName(i % nodes));
  if (web) p.metadata.namespace = 'default';
  addObject(store, p);
}
const log = pino({ level: 'silent' });
const config = parseConfig({});
const metrics = createMetrics();
const service = decisionService({ source: memorySource(store, 'bench'), actuator: memoryActuator(store, log, metrics), metrics, log, config });
const deps = { service, leading: () => true, gateEnabled: true, caller: trustedCaller, applySubsetPatches: false, log };
const app = admissionRoutes(deps, metrics, log, config.admission.bodyLimitBytes);
const l = await listen(app, '127.0.0.1:0', { tls: { managed: true } });
l.useCertificate(cert, key);
process.stdout.write(`${l.url}\n`);
process.on('SIGINT', () => process.exit(0));
