import { Hono } from 'hono';
import { CACHED_TOLERATIONS } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Extender } from '../extender/extender.js';
import type { Metrics } from '../metrics.js';
import { requireAuthorization, type AdminAuthorizer } from './adminAuth.js';
import { workloadKindNamed } from '../cluster/kinds.js';
import { isDnsLabel } from '../cluster/names.js';
import { LAYOUT_PODS_PER_ANSWER, managedLayouts, workloadLayout } from '../placement/layout.js';
import { addLayoutPage } from './uiRoutes.js';
import { workloadKey } from '../placement/workload.js';

export interface AdminDeps {
  source: SnapshotSource;
  extender: Extender;
  metrics: Metrics;
  /** False once shutdown has begun: readyz turns 503 first. */
  serving: () => boolean;
  /** When set, /metrics and /debug/* need a token the API server accepts and authorizes. */
  auth?: AdminAuthorizer;
}

type HealthDeps = Pick<AdminDeps, 'source' | 'serving'>;

/** healthz and readyz: what kubelet probes read, open to anyone who can reach the port. */
function addHealth(app: Hono, deps: HealthDeps): void {
  const { source } = deps;
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) => {
    const status = source.status();
    const synced = source.synced();
    const ready = deps.serving() && synced && status.healthy;
    const body = {
      ready, serving: deps.serving(), synced, healthy: status.healthy,
      notReady: status.kinds.filter((k) => !k.synced || (!k.watching && k.apiVersion !== 'file')).map((k) => k.kind),
    };
    return c.json(body, ready ? 200 : 503);
  });
}

/** The probe listener (admin.probeListen): health only, for the pod IP. */
export function probeRoutes(deps: HealthDeps): Hono {
  const app = new Hono();
  addHealth(app, deps);
  app.notFound((c) => c.json({ error: 'not found', message: `no route ${c.req.path}; this listener serves /healthz and /readyz only` }, 404));
  return app;
}

function podParam(value: string | undefined): { namespace: string; name: string } | undefined {
  if (!value) return undefined;
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}

/** The admin listener: health, readiness, metrics and the debug views (README, Endpoints). */
export function adminRoutes(deps: AdminDeps): Hono {
  const { source, extender, metrics } = deps;
  const app = new Hono();

  addHealth(app, deps);
  if (deps.auth) {
    app.use('/metrics', requireAuthorization(deps.auth));
    app.use('/debug/*', requireAuthorization(deps.auth));
  }
  app.get('/metrics', async (c) => {
    c.header('content-type', metrics.registry.contentType);
    return c.body(await metrics.registry.metrics());
  });
  app.get('/debug/cache', (c) => c.json({ ...source.status(), reservations: extender.state.reservations.size() }));

  app.get('/debug/workloads/:namespace/:kind/:name', (c) => {
    const { namespace, kind, name } = c.req.param();
    const k = workloadKindNamed(kind);
    if (!k) return c.json({ error: 'bad request', field: 'kind', message: `unknown kind ${kind}: use statefulset, deployment, replicaset, cloneset or advancedstatefulset` }, 400);
    const layout = workloadLayout(source.snapshot, k, namespace, name, extender.state);
    if (!layout) return c.json({ error: 'not found', message: `${k} ${namespace}/${name} is not in the cache` }, 404);
    const key = workloadKey({ kind: k, namespace, name });
    return c.json({ ...layout, conflicts: extender.state.conflicts().filter((x) => x.workload === key) });
  });

  // The layout page's data: every managed workload, or those of one namespace.
  app.get('/debug/layouts', (c) => {
    const namespace = c.req.query('namespace') || undefined;
    if (namespace !== undefined && !isDnsLabel(namespace)) {
      return c.json({ error: 'bad request', field: 'namespace', message: 'expected a namespace name' }, 400);
    }
    const { layouts, more } = managedLayouts(source.snapshot, extender.state, namespace);
    const conflicts = extender.state.conflicts();
    return c.json({
      source: source.describe(), synced: source.synced(), generatedAt: new Date().toISOString(), more, podsPerAnswer: LAYOUT_PODS_PER_ANSWER,
      workloads: layouts.map((l) => ({ ...l, conflicts: conflicts.filter((x) => x.workload === workloadKey(l.workload)) })),
    });
  });

  app.get('/debug/decisions', (c) => {
    const pod = podParam(c.req.query('pod'));
    if (!pod) return c.json({ error: 'bad request', field: 'pod', message: 'expected ?pod=namespace/name' }, 400);
    return c.json({ pod: `${pod.namespace}/${pod.name}`, decisions: extender.decisions.forPod(`${pod.namespace}/${pod.name}`) });
  });

  app.get('/debug/explain', (c) => {
    const pod = podParam(c.req.query('pod'));
    if (!pod) return c.json({ error: 'bad request', field: 'pod', message: 'expected ?pod=namespace/name' }, 400);
    if (!source.synced()) return c.json({ error: 'not ready', message: 'cache not synced yet' }, 503);
    const result = extender.explain(pod.namespace, pod.name);
    if (!result) return c.json({ error: 'not found', message: `pod ${pod.namespace}/${pod.name} is not in the cache` }, 404);
    return c.json({ ...result, note: `dry run against every cached node; nothing reserved or written; the cache keeps a pod's first ${CACHED_TOLERATIONS} tolerations` });
  });

  addLayoutPage(app);
  app.notFound((c) => c.json({ error: 'not found', message: `no route ${c.req.path}` }, 404));
  return app;
}
