import { readFileSync } from 'node:fs';
import { kubeActuator, memoryActuator, type Actuator } from './actuator/actuator.js';
import { leaseElector } from './actuator/leaderElection.js';
import { kubeApiClient, type ApiClient } from './cluster/apiClient.js';
import { loadClusterAccess } from './cluster/kubeconfig.js';
import { fileSource, type SnapshotSource } from './cluster/source.js';
import { systemClock } from './common/clock.js';
import { admissionCallers, DEFAULT_LEASE_NAME, LISTENER_SETTINGS, servesEvictions, type Config } from './common/config.js';
import type { Logger } from './common/logger.js';
import { federationHouse, house, type LeaderController } from './house.js';
import { callerCheck } from './http/callers.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { servesMutatingPolicies } from './policy/tableWriter.js';
import { federationProbeRoutes, federationRoutes } from './server/federationRoutes.js';
import { kubernetesAuthorizer } from './server/adminAuth.js';
import { adminRoutes, probeRoutes } from './server/adminRoutes.js';
import { extenderRoutes, pickerRoutes } from './server/extenderRoutes.js';
import { listen, ListenError, type Listener } from './server/listen.js';
import { clusterWatch, DEMO_WRITTEN_AT, federationWatchOf, type SourceChoice } from './sourceChoice.js';

export { chooseSource, DEMO_CLUSTER, type SourceChoice } from './sourceChoice.js';

// The process (docs/design.md#one-decision-its-transports): the cluster source opened, the house built (house.ts),
// its writers started in the Lease's holder and its routes listened on. Wiring only.

export interface Running {
  extender: Listener;
  admin: Listener;
  /** admin.probeListen: health only. */
  probes: Listener | undefined;
  /** picker.listen: the KEP-3189 pod picker for other controllers. */
  picker: Listener | undefined;
  /** admission.listen: the mutating webhook for pod CREATE. */
  admission: Listener | undefined;
  source: SnapshotSource;
  metrics: Metrics;
  /** Graceful within shutdownGraceSeconds in total: readyz turns 503, in-flight requests finish, watches stop. */
  stop(): Promise<void>;
}

function openSource(choice: SourceChoice, config: Config, log: Logger, metrics: Metrics): { source: SnapshotSource; actuator: Actuator; api?: ApiClient } {
  if (choice.kind === 'snapshot' || choice.kind === 'demo') {
    // The page's header shows the label: the demo by its name in the package, never the server's disk path.
    const label = choice.kind === 'demo' ? 'demo cluster (config/demo-cluster.yaml)' : `snapshot ${choice.path}`;
    const source = choice.kind === 'demo'
      ? fileSource(choice.path, label, '--demo', systemClock.now() - DEMO_WRITTEN_AT) : fileSource(choice.path, label);
    if (choice.kind === 'demo') log.info({ file: choice.path, why: choice.why }, 'serving the bundled demo cluster');
    log.info({ source: label, objects: source.loaded.loaded, skipped: source.loaded.skipped, notObjects: source.loaded.notObjects }, 'loaded objects from file');
    return { source, actuator: memoryActuator(source.store, log, metrics) };
  }
  const api = kubeApiClient(loadClusterAccess(choice), config.cluster);
  // Said before the first write: `serve` follows $KUBECONFIG and ~/.kube/config as kubectl does.
  const from = choice.kind === 'kubeconfig' ? `${choice.from} ${choice.path}` : 'in-cluster';
  const le = config.leaderElection;
  const lease = le.enabled ? `the Lease ${leaseNamespace(le.namespace)}/${le.leaseName}, then, as its holder, ` : '';
  log.info({ server: api.server, from: choice.kind === 'kubeconfig' ? choice.from : 'in-cluster' },
    `watching the cluster ${api.server} (${from}); writing there ${lease}Events and zonekeeper.io annotations on the workloads and pods it places `
    + '(docs/operations.md#what-serve-writes); a read-only look: zonekeeper audit');
  const source = clusterWatch(api, config.cluster, log, (kind, reason) => metrics.watchRestarts.inc({ kind, reason }));
  return { source, api, actuator: kubeActuator(api, log, metrics, config.instanceIds.assignDeadlineMs) };
}

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The Lease's namespace: configured, else the pod's own, else default. */
export function leaseNamespace(configured: string, read: (p: string) => string = (p) => readFileSync(p, 'utf8')): string {
  if (configured) return configured;
  try {
    return read(IN_CLUSTER_NAMESPACE).trim() || 'default';
  } catch {
    return 'default';
  }
}

/**
 * The controllers (every background write: gates, repair, pod annotations, statuses, health's
 * Events) run in one replica: the holder of the Lease, or this process alone when leader election is off.
 */
function startWriters(
  api: ApiClient, config: Config, log: Logger, metrics: Metrics, controllers: LeaderController[], lead: { holds: boolean },
): { stop(): Promise<void>; refused(): string } {
  const leading = {
    start: () => {
      lead.holds = true;
      for (const c of controllers) c.start();
    },
    stop: async () => {
      lead.holds = false;
      await Promise.all(controllers.map((c) => c.stop()));
    },
  };
  const le = config.leaderElection;
  if (!le.enabled) {
    leading.start();
    metrics.leader.set(1);
    return { stop: () => leading.stop(), refused: () => '' };
  }
  const elector = leaseElector(api, { ...le, name: le.leaseName, namespace: leaseNamespace(le.namespace) }, log, {
    onStartedLeading: () => {
      metrics.leader.set(1);
      leading.start();
    },
    onStoppedLeading: async () => {
      await leading.stop();
      metrics.leader.set(0);
    },
  });
  metrics.leader.set(0);
  elector.start();
  return { stop: () => elector.stop(), refused: () => elector.refused() };
}

/** Resolves when `work` does or at `deadline`, whichever comes first. */
function byDeadline(work: Promise<unknown> | undefined, deadline: number): Promise<void> {
  if (!work) return Promise.resolve();
  return new Promise((resolve) => {
    const cancel = systemClock.after(Math.max(0, deadline - systemClock.now()), resolve);
    work.then(() => { cancel(); resolve(); }, () => { cancel(); resolve(); });
  });
}

/** Listeners that take any free port when theirs is in use (the demo's, at their defaults), saying which. */
export interface ServeOptions { anyPortWhenBusy?: readonly ('extender' | 'admin')[] }

/** `listen`, or, for a listener that may move, any free port on the same host when the port is in use. */
async function listenOrMove(
  name: 'extender' | 'admin', may: ServeOptions, log: Logger, ...args: Parameters<typeof listen>
): Promise<Listener> {
  try {
    return await listen(...args);
  } catch (err) {
    const inUse = err instanceof ListenError && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
    if (!inUse || !may.anyPortWhenBusy?.includes(name)) throw err;
    const [app, hostPort, o] = args;
    const moved = await listen(app, `${hostPort.slice(0, hostPort.lastIndexOf(':'))}:0`, o);
    const { flag } = LISTENER_SETTINGS[name];
    log.warn({ listener: name, busy: hostPort, url: moved.url }, `${hostPort} is in use: the ${name} listener took ${moved.url} instead (choose one with ${flag} HOST:PORT)`);
    return moved;
  }
}

export async function startServer(
  config: Config, choice: SourceChoice, log: Logger, metrics = createMetrics({ defaults: true }), may: ServeOptions = {},
): Promise<Running> {
  const { source, actuator, api } = openSource(choice, config, log, metrics);
  if (config.admin.authorization === 'kubernetes' && !api) {
    throw new Error('admin.authorization: kubernetes needs an API server to review tokens; a file source has none');
  }
  if (config.picker.listen && config.picker.authorization === 'kubernetes' && !api) {
    throw new Error('picker.authorization: kubernetes needs an API server to review tokens; a file source has none');
  }
  if (config.admission.listen && config.admission.certificate.secret && !api) throw new Error('admission.certificate needs an API server to keep its Secret in; a file source has none');
  // Whether this replica holds the Lease: admission decides only there what reads shared counters.
  const lead = { holds: !config.leaderElection.enabled || !api };
  // Whether the API server serves the policy the seat table is for: asked at every start (readiness details, /debug/cache).
  const policyServed = api ? await servesMutatingPolicies(api) : undefined;
  const h = house({ config, source, actuator, api, metrics, log, policyServed, leading: () => lead.holds });
  const writers = h.controllers.length > 0 && api ? startWriters(api, config, log, metrics, h.controllers, lead) : undefined;
  let serving = true;
  source.start();
  h.layoutHealth.start();
  const limits = config.http;
  // Connections counted, and TLS files read again as cert-manager renews them (docs/operations.md#the-admission-certificate).
  const setting = (name: keyof typeof LISTENER_SETTINGS) => ({ name, ...LISTENER_SETTINGS[name] });
  const listenerHooks = (listener: keyof typeof LISTENER_SETTINGS) => ({
    setting: setting(listener),
    onConnection: () => metrics.connections.inc({ listener }), onDrop: () => metrics.connectionsDropped.inc({ listener }),
    onTlsReload: (err?: Error) => (err ? log.warn({ listener, err: err.message }, 'TLS files not read again; the ones served stay')
      : log.info({ listener }, 'TLS files changed: new connections get the new certificate')),
  });
  const ext = await listenOrMove('extender', may, log, extenderRoutes(h.extender, metrics, log, config.extender), config.extender.listen, { tls: config.extender.tls, limits, ...listenerHooks('extender') });
  const auth = config.admin.authorization === 'kubernetes' && api ? kubernetesAuthorizer(api, config.admin.tokenAudiences) : undefined;
  const admin = await listenOrMove('admin', may, log, adminRoutes({ ...h.admin, metrics, serving: () => serving, auth }), config.admin.listen, { limits, ...listenerHooks('admin') });
  const probes = config.admin.probeListen
    ? await listen(probeRoutes({ source, serving: () => serving, policy: h.policy }), config.admin.probeListen,
        { limits, ...listenerHooks('probe') }) : undefined;
  const pickerAuth = config.picker.authorization === 'kubernetes' && api ? (auth ?? kubernetesAuthorizer(api, config.admin.tokenAudiences)) : undefined;
  const picker = config.picker.listen
    ? await listen(pickerRoutes(h.extender, metrics, log, config.extender.pickerBodyLimitBytes, pickerAuth), config.picker.listen, { tls: config.picker.tls, limits, ...listenerHooks('picker') })
    : undefined;
  const callers = admissionCallers(config.admission);
  if (config.admission.listen && callers === 'none') {
    // Without OpenKruise, gated pods get only what the gate may write of a WorkloadSpread subset's patch (docs/design.md#the-zone-gate).
    const patches = config.workloadSpread.writeStatus ? '; WorkloadSpread subset patches are applied only as far as the gate may write them' : '';
    log.warn({ evictions: servesEvictions(config.admission) }, 'admission callers are not authenticated (no admission.tls.clientCAFile, admission.trustNetwork false): reviews are answered but write nothing; '
    + `pods are gated for the keeper and evictions by other callers refused (those of zonekeeper skip the webhook by identity and are judged in process)${patches} (docs/security.md#who-may-call-the-webhooks)`);
  }
  const clientCAFile = config.admission.tls.clientCAFile;
  const admission = config.admission.listen
    ? await listen(h.webhooks(config.admission.bodyLimitBytes, callerCheck(config.admission)), config.admission.listen,
        { tls: h.certificate ? { managed: true, clientCAFile } : config.admission.tls, limits: { ...limits, maxConnections: config.admission.maxConnections, maxConnectionsPerSource: config.admission.maxConnectionsPerSource }, ...listenerHooks('admission') })
    : undefined;
  if (admission && h.certificate) {
    h.serving.certificate = admission.useCertificate;
    h.certificate.startLoading();
  }
  log.info({ admission: admission?.url, extender: ext.url, admin: admin.url, page: new URL('/ui', admin.url).href, probes: probes?.url, picker: picker?.url, adminAuthorization: config.admin.authorization, source: source.describe() }, 'zonekeeper serving');
  log.info(`the layout page: ${new URL('/ui', admin.url).href}`);
  return {
    extender: ext, admin, probes, picker, admission, source, metrics,
    async stop() {
      // One deadline for everything: listeners close together, then the writers get what is left.
      const deadline = systemClock.now() + config.shutdownGraceSeconds * 1000;
      serving = false;
      await h.layoutHealth.stop();
      h.certificate?.stopLoading();
      await Promise.all([ext.close(deadline), admin.close(deadline), probes?.close(deadline), picker?.close(deadline), admission?.close(deadline)]);
      await byDeadline(writers?.stop(), deadline);
      await byDeadline(h.label?.close(), deadline);
      await byDeadline(source.stop(), deadline);
      await byDeadline(actuator.settle(), deadline);
    },
  };
}

/** `zonekeeper karmada`'s Lease when the configuration names none: the one manifests/karmada/rbac.yaml grants. */
const KARMADA_LEASE = { namespace: 'zonekeeper-system', name: 'zonekeeper-karmada' };

/** What `zonekeeper karmada` runs. */
export interface FederationRunning { admin: Listener; stop(): Promise<void> }

/**
 * zonekeeper as the scheduler of Karmada's bindings that name it (docs/design.md#across-clusters): the federation
 * watched, its one decision service, and the binding scheduler in the holder of a Lease on the Karmada control plane.
 */
export async function startFederation(
  config: Config, access: Parameters<typeof loadClusterAccess>[0], log: Logger, metrics = createMetrics({ defaults: true }),
): Promise<FederationRunning> {
  const api = kubeApiClient(loadClusterAccess(access), config.cluster);
  log.info({ server: api.server, schedulerName: config.karmada.schedulerName }, 'scheduling the Karmada bindings that name zonekeeper');
  const view = federationWatchOf(api, config, log);
  const { service, scheduler } = federationHouse({ view, config, metrics, log, api });
  // Its Lease lives on the Karmada control plane, where the shipped RBAC (manifests/karmada/rbac.yaml) grants zonekeeper-system/zonekeeper-karmada.
  const le = config.leaderElection;
  const lease = {
    ...le, namespace: le.namespace || KARMADA_LEASE.namespace, leaseName: le.leaseName === DEFAULT_LEASE_NAME ? KARMADA_LEASE.name : le.leaseName,
  };
  const writers = startWriters(api, { ...config, leaderElection: lease }, log, metrics, [scheduler], { holds: false });
  let serving = true;
  view.start();
  const auth = config.admin.authorization === 'kubernetes' ? kubernetesAuthorizer(api, config.admin.tokenAudiences) : undefined;
  const admin = await listen(federationRoutes({ view, service, metrics, serving: () => serving, lease: writers.refused, auth }), config.admin.listen,
    { limits: config.http, setting: { name: 'admin', ...LISTENER_SETTINGS.admin } });
  const probes = config.admin.probeListen
    ? await listen(federationProbeRoutes({ view, serving: () => serving, lease: writers.refused }), config.admin.probeListen, { limits: config.http, setting: { name: 'probe', ...LISTENER_SETTINGS.probe } })
    : undefined;
  log.info({ admin: admin.url, page: new URL('/ui', admin.url).href, probes: probes?.url }, 'zonekeeper scheduling Karmada bindings');
  return {
    admin,
    async stop() {
      const deadline = systemClock.now() + config.shutdownGraceSeconds * 1000;
      serving = false;
      await Promise.all([admin.close(deadline), probes?.close(deadline)]);
      await byDeadline(writers.stop(), deadline);
      await byDeadline(view.stop(), deadline);
    },
  };
}
