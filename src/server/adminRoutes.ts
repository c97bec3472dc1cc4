import { Hono } from 'hono';
import { workloadKindNamed } from '../cluster/kinds.js';
import { isDnsLabel } from '../cluster/names.js';
import { CACHED_TOLERATIONS, type SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { HealthTracker } from '../controllers/layoutHealth.js';
import type { PolicyAgreement } from '../policy/check.js';
import type { RepairStatus } from '../controllers/repair.js';
import type { RolloutStatus } from '../controllers/zoneRollout.js';
import type { DebugViews } from '../decision/views.js';
import type { Metrics } from '../metrics/metrics.js';
import { requireAuthorization, type AdminAuthorizer } from './adminAuth.js';
import { failWith } from '../http/httpErrors.js';
import { addLayoutPage, CSP } from './uiRoutes.js';
import { explainPage, wantsHtml } from './explainPage.js';
import { systemClock, type Clock } from '../common/clock.js';

export interface AdminDeps {
  source: SnapshotSource;
  /** The decision service's debug views: decisions, explain, layouts, reservations. */
  views: DebugViews;
  metrics: Metrics;
  /** False once shutdown has begun: readyz turns 503 first. */
  serving: () => boolean;
  /** When set, /metrics and /debug/* need a token the API server accepts and authorizes. */
  auth?: AdminAuthorizer;
  /** Every managed workload's health, when it is kept (/debug/health, the page's health lines). */
  layoutHealth?: Pick<HealthTracker, 'all' | 'get'>;
  /** Repair's last decision per opted-in workload, when rebalance is enabled (/debug/repair). */
  repair?: { status(): RepairStatus[] };
  /** Zone-by-zone rollouts' last step per opted-in workload, in the replica that runs them (/debug/rollouts). */
  rollouts?: { status(): RolloutStatus[] };
  /** The zone gate's keeper, when gate.enabled and a cluster is watched (/debug/gate). */
  gate?: { view(): { gated: number; waiting: { pod: string; why: string }[] } };
  /** The policy transport, against a cluster: whether the API server serves MutatingAdmissionPolicies, and whether the seat table is written. */
  policy?: { apiServed: boolean | undefined; seatTable: boolean };
  /** Zonekeeper's own decision against the zone the policy wrote, for a pod marked `zonekeeper.io/decided-by: policy` (/debug/explain). */
  policyAgreement?: (pod: SlimPod) => Promise<PolicyAgreement>;
  clock?: Clock;
}

/** Workloads /debug/health lists; the rest are counted. */
const HEALTH_LISTED = 1000;

type HealthDeps = Pick<AdminDeps, 'source' | 'serving' | 'policy'>;

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
      // A detail, never a condition: without the policy API (before 1.36) admission and the gate decide every pod.
      ...(deps.policy ? { policy: deps.policy } : {}),
    };
    return c.json(body, ready ? 200 : 503);
  });
}

/**
 * What a request no handler took gets: 405 with Allow when another method serves its path (every
 * route here is GET, HEAD with it), as the extender listener answers; else 404 with `notFound`.
 */
function answerUnrouted(app: Hono, notFound: (path: string) => string): void {
  let served: RegExp[] | undefined;
  app.notFound((c) => {
    served ??= app.routes.filter((r) => r.method === 'GET')
      .map((r) => new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`));
    if (c.req.method !== 'GET' && served.some((re) => re.test(c.req.path))) {
      return failWith(c, 405, 'method not allowed', `${c.req.method} ${c.req.path}: this path serves GET and HEAD`, { headers: { allow: 'GET, HEAD' } });
    }
    return failWith(c, 404, 'not found', notFound(c.req.path));
  });
}

/** The probe listener (admin.probeListen): health only, for the pod IP. */
export function probeRoutes(deps: HealthDeps): Hono {
  const app = new Hono();
  addHealth(app, deps);
  answerUnrouted(app, (path) => `no route ${path}; this listener serves /healthz and /readyz only`);
  return app;
}

function podParam(value: string | undefined): { namespace: string; name: string } | undefined {
  if (!value) return undefined;
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}

/** How a pod marked `zonekeeper.io/decided-by: policy` was decided, and whether zonekeeper agrees (undefined: it cannot tell now). */
async function policyDecided(pod: SlimPod, agreement: AdminDeps['policyAgreement']) {
  const a = await agreement?.(pod);
  return {
    by: 'policy', decidedBy: 'the seat table, in kube-apiserver (MutatingAdmissionPolicy zonekeeper-seats)',
    zonekeeperAgrees: a?.agrees, ...(a?.agrees === false ? { reason: a.reason, policyZone: a.policyZone, zonekeeperDecides: a.zonekeeper } : {}),
    why: a?.why ?? 'not checked here',
  };
}

/** `GET /debug`: every debug view, each with what it shows and a path to try (docs/operations.md#endpoints). */
const DEBUG_INDEX = [
  { path: '/debug/health', what: 'every managed workload\'s health, at risk first (what `zonekeeper audit` prints)', example: '/debug/health' },
  { path: '/debug/explain?pod=NAMESPACE/NAME', what: 'where a pod is, where its seat is, why they differ, the command that fixes it (a page for a browser)', example: '/debug/explain?pod=default/db-0' },
  { path: '/debug/layouts[?namespace=NS]', what: 'every managed workload\'s layout: what the page at /ui draws', example: '/debug/layouts' },
  { path: '/debug/workloads/NAMESPACE/KIND/NAME', what: 'one workload: zone list, sequence, pods by seat, reservations', example: '/debug/workloads/default/statefulset/db' },
  { path: '/debug/decisions?pod=NAMESPACE/NAME', what: 'the last decisions for a pod, rejected nodes grouped by reason', example: '/debug/decisions?pod=default/db-0' },
  { path: '/debug/cache', what: 'per kind: objects, synced, watching, last error', example: '/debug/cache' },
  { path: '/debug/gate', what: 'pods held by the zone gate and why each waits', example: '/debug/gate' },
  { path: '/debug/repair', what: 'with rebalance.enabled: what repair last did per opted-in workload', example: '/debug/repair' },
  { path: '/debug/rollouts', what: 'zone-by-zone rollouts and their last step', example: '/debug/rollouts' },
] as const;

/** The admin listener: health, readiness, metrics and the debug views (README, Endpoints). */
export function adminRoutes(deps: AdminDeps): Hono {
  const { source, views, metrics } = deps;
  const app = new Hono();
  const readAt = new Date((deps.clock ?? systemClock).now()).toISOString();

  addHealth(app, deps);
  if (deps.auth) {
    app.use('/metrics', requireAuthorization(deps.auth));
    app.use('/debug/*', requireAuthorization(deps.auth)); // /debug too
  }
  app.get('/debug', (c) => c.json({ page: '/ui', metrics: '/metrics', debug: DEBUG_INDEX }));
  app.get('/debug/', (c) => c.redirect('/debug'));
  app.get('/metrics', async (c) => {
    c.header('content-type', metrics.registry.contentType);
    return c.body(await metrics.registry.metrics());
  });
  app.get('/debug/cache', (c) => c.json({ ...source.status(), reservations: views.reservationCount(), ...(deps.policy ? { policy: deps.policy } : {}) }));

  app.get('/debug/workloads/:namespace/:kind/:name', (c) => {
    const { namespace, kind, name } = c.req.param();
    const k = workloadKindNamed(kind);
    if (!k) return failWith(c, 400, 'bad request', `unknown kind ${kind}: use statefulset, deployment, replicaset, cloneset or advancedstatefulset`, { field: 'kind' });
    const layout = views.workloadLayout(k, namespace, name);
    if (!layout) return failWith(c, 404, 'not found', `${k} ${namespace}/${name} is not in the cache`);
    return c.json(layout);
  });

  // The layout page's data: every managed workload, or those of one namespace.
  app.get('/debug/layouts', (c) => {
    const namespace = c.req.query('namespace') || undefined;
    if (namespace !== undefined && !isDnsLabel(namespace)) {
      return failWith(c, 400, 'bad request', 'expected a namespace name', { field: 'namespace' });
    }
    const { layouts, more, podsPerAnswer } = views.layouts(namespace, deps.layoutHealth?.get);
    // A file: nothing binds its pods, and its ages are as of its reading, not growing with the clock.
    const file = source.fromFile ? { nothingBinds: true, asOf: readAt } : {};
    return c.json({
      source: source.describe(), synced: source.synced(), generatedAt: new Date((deps.clock ?? systemClock).now()).toISOString(), more, podsPerAnswer, ...file,
      workloads: layouts,
    });
  });

  app.get('/debug/decisions', (c) => {
    const pod = podParam(c.req.query('pod'));
    if (!pod) return failWith(c, 400, 'bad request', 'expected ?pod=namespace/name', { field: 'pod' });
    return c.json({ pod: `${pod.namespace}/${pod.name}`, decisions: views.decisionsFor(`${pod.namespace}/${pod.name}`) });
  });

  app.get('/debug/explain', async (c) => {
    const pod = podParam(c.req.query('pod'));
    if (!pod) return failWith(c, 400, 'bad request', 'expected ?pod=namespace/name', { field: 'pod' });
    if (!source.synced()) return failWith(c, 503, 'not ready', 'cache not synced yet');
    const result = views.explain(pod.namespace, pod.name);
    if (!result) return failWith(c, 404, 'not found', `pod ${pod.namespace}/${pod.name} is not in the cache`);
    const cached = source.snapshot.pod(pod.namespace, pod.name);
    const transport = cached?.decidedByPolicy ? { transport: await policyDecided(cached, deps.policyAgreement) } : {};
    const body = { ...result, ...transport, note: `dry run against every cached node; nothing reserved or written; the cache keeps a pod's first ${CACHED_TOLERATIONS} tolerations` };
    // One answer, two forms: a page for a browser, JSON for curl and jq (and for any client that does not name text/html).
    c.header('vary', 'Accept');
    if (!wantsHtml(c.req.header('accept'))) return c.json(body);
    return c.html(explainPage(body, c.req.url), 200, { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
  });

  // Every managed workload's health, at risk first; the shape of `zonekeeper audit -o json` (source, atRisk, workloads) plus kept and more.
  app.get('/debug/health', (c) => {
    const namespace = c.req.query('namespace') || undefined;
    const all = (deps.layoutHealth?.all() ?? []).filter((h) => namespace === undefined || h.ref.namespace === namespace);
    return c.json({
      source: source.describe(), kept: deps.layoutHealth !== undefined, atRisk: all.filter((h) => h.atRisk).length, workloads: all.slice(0, HEALTH_LISTED),
      more: Math.max(0, all.length - HEALTH_LISTED),
    });
  });

  // What repair last decided for each opted-in workload, and why it waits.
  app.get('/debug/repair', (c) => c.json({ enabled: deps.repair !== undefined, workloads: deps.repair?.status() ?? [] }));
  // Every rollout health shows (any replica), and what this replica last did for each, when it holds the Lease.
  app.get('/debug/rollouts', (c) => {
    const steps = new Map((deps.rollouts?.status() ?? []).map((s) => [s.workload, s]));
    const shown = (deps.layoutHealth?.all() ?? []).filter((h) => h.rollout !== undefined || steps.has(h.key));
    return c.json({
      enabled: deps.rollouts !== undefined,
      workloads: shown.slice(0, HEALTH_LISTED).map((h) => ({ workload: h.key, rollout: h.rollout, lastStep: steps.get(h.key) })),
      more: Math.max(0, shown.length - HEALTH_LISTED),
    });
  });
  // Gated pods the cache shows, and why each still waits (the first 100).
  app.get('/debug/gate', (c) => c.json({ enabled: deps.gate !== undefined, ...(deps.gate?.view() ?? { gated: 0, waiting: [] }) }));

  addLayoutPage(app);
  answerUnrouted(app, (path) => `no route ${path}`);
  return app;
}
