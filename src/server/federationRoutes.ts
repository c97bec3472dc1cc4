import { Hono } from 'hono';
import type { FederationView } from '../cluster/memberClusters.js';
import type { FederationService } from '../decision/bindingDecisions.js';
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
  /** Why the Lease cannot be taken (the API server refuses this identity), or '': such a replica never writes, so it is not ready. */
  lease?: () => string;
  auth?: AdminAuthorizer;
}

/** Health only, for kubelet probes on the pod IP (admin.probeListen). */
export function federationProbeRoutes(d: Pick<FederationRoutesDeps, 'view' | 'serving' | 'lease'>): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) => {
    const refused = d.lease?.() ?? '';
    if (refused) return c.text(`cannot lead: ${refused} (docs/operations.md#across-clusters-karmada)`, 503);
    return d.serving() && d.view.ready() ? c.text('ok') : c.text(d.view.synced() ? 'stale: the Karmada watch is failing' : 'not synced', 503);
  });
  return app;
}

export function federationRoutes(d: FederationRoutesDeps): Hono {
  const app = federationProbeRoutes(d);
  app.get('/ui', (c) => {
    c.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(federationPage(d));
  });
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
    members: d.view.members(),
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

const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The page: every federated workload, its replicas per member and why; every member's zones. Values are text, never markup. */
function federationPage(d: FederationRoutesDeps): string {
  const members = d.view.members();
  const rows = d.service.workloads().map((w) => `<h2>${esc(w.workload)} <small>${esc(w.binding)}: ${esc(w.replicas)} replicas, ${esc(w.why)}</small></h2>
<table><tr><th>member</th><th>replicas</th><th>had</th><th>state</th><th>waiting</th><th>why</th></tr>${w.members.map((m) => `<tr><td>${esc(m.cluster)}</td><td>${esc(m.replicas)}</td>`
  + `<td>${esc(m.assigned)}</td><td>${esc(m.state)}</td><td>${m.pending ? `${esc(m.pending)} since ${esc(new Date(m.pendingSince ?? 0).toISOString())}` : ''}</td><td>${esc(m.why)}</td></tr>`).join('')}</table>`
  + (w.unplaced ? `<p class="risk">${esc(w.unplaced)} replicas fit no member</p>` : ''));
  const memberRows = members.map((m) => `<tr><td>${esc(m.name)}</td><td>${m.healthy ? 'read' : `cannot read: ${esc(m.error)}`}</td><td>${esc(m.zones.join(', '))}</td></tr>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>zonekeeper: across clusters</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}.risk{color:#b00}</style></head>
<body><h1>zonekeeper across clusters</h1><table><tr><th>member</th><th>zonekeeper's view</th><th>zones</th></tr>${memberRows}</table>${rows.join('') || '<p>No binding planned yet.</p>'}</body></html>`;
}
