import { Hono } from 'hono';
import type { FederationView } from '../cluster/federation.js';
import type { FederationService } from '../decision/federation.js';
import type { Metrics } from '../metrics/metrics.js';
import { failWith } from '../http/httpErrors.js';
import { requireAuthorization, type AdminAuthorizer } from './adminAuth.js';

// The admin listener of `zonekeeper karmada` (docs/operations.md#across-clusters-karmada): health, metrics, and each
// federated workload's replicas per member with why, and each member's zones.

export interface FederationRoutesDeps {
  view: FederationView;
  service: FederationService;
  metrics: Metrics;
  serving: () => boolean;
  auth?: AdminAuthorizer;
}

export function federationRoutes(d: FederationRoutesDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) => (d.serving() && d.view.ready() ? c.text('ok') : c.text(d.view.synced() ? 'stale: the Karmada watch is failing' : 'not synced', 503)));
  if (d.auth) {
    app.use('/metrics', requireAuthorization(d.auth));
    app.use('/debug/*', requireAuthorization(d.auth));
  }
  app.get('/metrics', async (c) => {
    c.header('content-type', d.metrics.registry.contentType);
    return c.body(await d.metrics.registry.metrics());
  });
  app.get('/debug', (c) => c.json({ endpoints: ['/debug/federation', '/debug/explain?binding=NAMESPACE/NAME'] }));
  app.get('/debug/federation', (c) => c.json({
    ready: d.view.ready(),
    members: d.view.members().map((m) => ({ ...m, zones: zonesOf(d, m.name) })),
    workloads: d.service.workloads(),
  }));
  app.get('/debug/explain', (c) => {
    const key = c.req.query('binding') ?? '';
    if (!key) return failWith(c, 400, 'bad request', 'expected ?binding=NAMESPACE/NAME (a ClusterResourceBinding: NAME)', { field: 'binding' });
    const w = d.service.workloads().find((x) => x.binding === key);
    if (!w) return failWith(c, 404, 'not found', `binding ${key} is not one zonekeeper schedules, or has not been planned yet`);
    return c.json(w);
  });
  return app;
}

/** The zones zonekeeper sees in a member (its nodes'), else the zones Karmada's Cluster names. */
function zonesOf(d: FederationRoutesDeps, member: string): string[] {
  const read = d.view.reading(member, { kind: '', namespace: '', name: '' });
  const seen = read ? [...new Set(read.nodes.map((n) => n.zone).filter((z): z is string => !!z))].sort() : [];
  return seen.length ? seen : [...(d.view.clusters().find((c) => c.name === member)?.zones ?? [])];
}
