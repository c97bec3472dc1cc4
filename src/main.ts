import { readFileSync } from 'node:fs';
import { kubeActuator, memoryActuator, type Actuator } from './actuator/actuator.js';
import { deletionCostController } from './controllers/deletionCosts.js';
import { instancePodAnnotator } from './controllers/instancePods.js';
import { podAnnotationController } from './controllers/podAnnotations.js';
import { workloadSpreadAdoptionController } from './controllers/workloadSpreadAdoption.js';
import { workloadSpreadStatusController } from './controllers/workloadSpreadStatus.js';
import { ownerArrival } from './admission/ownerArrival.js';
import { healthTracker } from './controllers/layoutHealth.js';
import { repairController } from './controllers/repair.js';
import { evictPod, type EvictionGate } from './controllers/eviction.js';
import { zoneRolloutController } from './controllers/zoneRollout.js';
import { leaseElector } from './actuator/leaderElection.js';
import { kubeApiClient, type ApiClient } from './cluster/apiClient.js';
import { loadClusterAccess } from './cluster/kubeconfig.js';
import { fileSource, type SnapshotSource } from './cluster/source.js';
import { LISTENER_SETTINGS, type Config } from './common/config.js';
import { clusterWatch, DEMO_WRITTEN_AT, type SourceChoice } from './sourceChoice.js';

export { chooseSource, DEMO_CLUSTER, type SourceChoice } from './sourceChoice.js';
import { admissionRoutes } from './admission/routes.js';
import { evictionRoute } from './eviction/routes.js';
import { decideGate } from './controllers/gateDecision.js';
import { decisionService } from './decision/service.js';
import { debugViews } from './decision/views.js';
import { createExtender } from './extender/extender.js';
import { zoneGateKeeper } from './controllers/zoneGateKeeper.js';
import { webhookCertificate } from './controllers/webhookCertificate.js';
import { holderLabel, ownPod } from './controllers/holderLabel.js';
import { seatTableController, servesMutatingPolicies, tableWrites } from './controllers/seatTable.js';
import { policyAgreement, policyCheckController } from './controllers/policyCheck.js';
import type { Logger } from './common/logger.js';
import { createMetrics, registerHealthGauges, registerStateGauges, type Metrics } from './metrics/metrics.js';
import { kubernetesAuthorizer } from './server/adminAuth.js';
import { adminRoutes, probeRoutes } from './server/adminRoutes.js';
import { extenderRoutes, pickerRoutes } from './server/extenderRoutes.js';
import { listen, type Listener } from './server/listen.js';
import { systemClock } from './common/clock.js';

/** A writer that runs only in the Lease's holder. */
interface LeaderController {
  start(): void;
  stop(): Promise<void>;
}

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
  const api = kubeApiClient(loadClusterAccess(choice));
  log.info({ server: api.server, from: choice.kind === 'kubeconfig' ? choice.from : 'in-cluster' }, 'watching the cluster');
  const source = clusterWatch(api, config.cluster, log, (kind, reason) => metrics.watchRestarts.inc({ kind, reason }));
  return { source, api, actuator: kubeActuator(api, log, metrics, config.instanceIds.assignDeadlineMs) };
}

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
/** How long admission waits for the watch to show a new pod's ReplicaSet or StatefulSet: well under the webhook's 5 s timeout. */
const OWNER_ARRIVAL_MS = 1_000;

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
): { stop(): Promise<void> } {
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
    return { stop: () => leading.stop() };
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
  return { stop: () => elector.stop() };
}

/** Resolves when `work` does or at `deadline`, whichever comes first. */
function byDeadline(work: Promise<unknown> | undefined, deadline: number): Promise<void> {
  if (!work) return Promise.resolve();
  return new Promise((resolve) => {
    const cancel = systemClock.after(Math.max(0, deadline - systemClock.now()), resolve);
    work.then(() => { cancel(); resolve(); }, () => { cancel(); resolve(); });
  });
}

export async function startServer(config: Config, choice: SourceChoice, log: Logger, metrics = createMetrics({ defaults: true })): Promise<Running> {
  const { source, actuator, api } = openSource(choice, config, log, metrics);
  if (config.admin.authorization === 'kubernetes' && !api) {
    throw new Error('admin.authorization: kubernetes needs an API server to review tokens; a file source has none');
  }
  if (config.picker.listen && config.picker.authorization === 'kubernetes' && !api) {
    throw new Error('picker.authorization: kubernetes needs an API server to review tokens; a file source has none');
  }
  // The one decision service (one reservation ledger, one decision log), handed to every transport.
  const service = decisionService({ source, actuator, metrics, log, config });
  // zonekeeper's own evictions (repair, fallbacks, rescheduling) ask the zone disruption budget first, as the holder.
  const evictionGate: EvictionGate = async (pod, by) => service.eviction({ ...pod, dryRun: false, leading: true, by });
  const extender = createExtender(service, { source, log, config });
  const lists = { pendingFreezes: actuator.pendingFreezes };
  const controllers: LeaderController[] = [];
  if (config.deletionCost.enabled && api) controllers.push(deletionCostController(api, source, { ...config.placement }, config.deletionCost, log,
    metrics, lists));
  if (config.deletionCost.enabled && !api) log.warn('deletion costs need a cluster to write to; not managed for a file source');
  if (config.instanceIds.keepPods && api) {
    controllers.push(podAnnotationController(api, source, instancePodAnnotator(actuator, { ...config.placement }, lists, log), config.instanceIds,
      log, metrics));
  }
  if (config.workloadSpread.writeStatus && api) {
    // Pods a standalone WorkloadSpread did not place get Kruise's mark, paced as deletion costs are.
    controllers.push(workloadSpreadAdoptionController(api, source, { ...config.placement }, { intervalSeconds: config.workloadSpread.statusIntervalSeconds,
      patchesPerSecond: config.deletionCost.patchesPerSecond }, log, metrics, lists));
    controllers.push(workloadSpreadStatusController(api, source, { ...config.placement }, service.state.reservations, { record: actuator.recordEvent },
      { intervalSeconds: config.workloadSpread.statusIntervalSeconds, patchesApplied: !!config.admission.listen,
        rescheduleEvictionsPerMinute: config.workloadSpread.rescheduleEvictionsPerMinute, rescheduleDryRun: config.workloadSpread.rescheduleDryRun,
        evictionGate },
      log, metrics, lists));
  }
  // Health is kept in every replica (metrics, the page); only the Lease's holder records its Events.
  const layoutHealth = healthTracker(source, service.state, actuator.recordEvent,
    { ...config.health, rollout: config.zoneRollout.enabled ? config.zoneRollout : undefined }, log);
  if (config.health.events && api) controllers.push({ start: layoutHealth.startEvents, stop: layoutHealth.stopEvents });
  // A file source has no Lease and no API server: this process records them, to its log (memoryActuator).
  if (config.health.events && !api) layoutHealth.startEvents();
  const repair = config.rebalance.enabled && api
    ? repairController(api, source, layoutHealth, service.state, { record: actuator.recordEvent }, { ...config.rebalance, gate: evictionGate }, log,
        metrics) : undefined;
  if (repair) controllers.push(repair);
  // Zone-by-zone rollouts: every eviction through the Eviction API (PodDisruptionBudgets and the zone budget decide).
  const rollouts = config.zoneRollout.enabled && api
    ? zoneRolloutController({
        api, source, settings: { ...config.placement }, lists, evict: (pod) => evictPod(api, pod, log, { judge: evictionGate, by: 'zonekeeper zone-by-zone rollout' }), events: { record: actuator.recordEvent },
        opts: config.zoneRollout, log, metrics,
      }) : undefined;
  if (rollouts) controllers.push(rollouts);
  const gate = config.gate.enabled && api
    ? zoneGateKeeper({
        api, source, decide: (pod) => decideGate(service, pod), skipForSuccessor: (fb) => service.state.gateFallback(fb),
        events: { record: actuator.recordEvent }, subsetPatchesOwned: config.workloadSpread.writeStatus, evictionGate, opts: config.gate, log, metrics,
      }) : undefined;
  if (gate) controllers.push(gate);
  // The policy transport (docs/design.md#the-policy): the seat table, only where the API server serves the policy that reads it.
  // Whether it does is asked at every start (readiness details, /debug/cache), the table written only with policy.seatTable.
  const policy = api ? { apiServed: await servesMutatingPolicies(api), seatTable: false } : undefined;
  /** The tables this holder wrote: the check tells a pod decided from an older one. */
  const tables = tableWrites();
  if (policy && api && config.policy.seatTable && policy.apiServed === true) {
    policy.seatTable = true;
    controllers.push(seatTableController(api, source, { ...config.placement }, config.policy, { record: actuator.recordEvent }, log, metrics,
      undefined, tables));
    log.info({ configMap: config.policy.configMapName }, 'policy transport on: the API server serves MutatingAdmissionPolicies; the Lease holder publishes seat tables');
  } else if (policy && config.policy.seatTable) {
    log.warn({ apiServed: policy.apiServed ?? 'unknown' }, 'policy transport off: the API server does not serve admissionregistration.k8s.io/v1 mutatingadmissionpolicies (Kubernetes 1.36+); no seat table is published');
  } else if (policy) {
    log.info({ apiServed: policy.apiServed ?? 'unknown' }, 'policy transport off (policy.seatTable); whether the API server serves MutatingAdmissionPolicies (Kubernetes 1.36+) is in apiServed');
  }
  // Every pod the policy decided (a table written by this or an earlier holder) is checked against zonekeeper's own decision.
  if (api) controllers.push(policyCheckController(source, service, { record: actuator.recordEvent }, log, metrics, undefined, tables));
  if (config.rebalance.enabled && !api) log.warn('rebalance needs a cluster to evict in; off for a file source');
  // admission.certificate: the holder keeps the Secret and the caBundle; every replica serves what the Secret holds.
  const managed = config.admission.certificate;
  if (config.admission.listen && managed.secret && !api) throw new Error('admission.certificate needs an API server to keep its Secret in; a file source has none');
  let serveCertificate: (cert: string, key: string) => void = () => {};
  const certificate = config.admission.listen && managed.secret && api
    ? webhookCertificate(api, {
        secret: { namespace: managed.secret.slice(0, managed.secret.indexOf('/')), name: managed.secret.slice(managed.secret.indexOf('/') + 1) },
        webhookConfiguration: managed.webhookConfiguration, evictionWebhookConfiguration: managed.evictionWebhookConfiguration,
        names: { dnsNames: managed.dnsNames, ipAddresses: managed.ipAddresses }, validityDays: managed.validityDays, renewBeforeDays: managed.renewBeforeDays,
        checkIntervalSeconds: managed.checkIntervalSeconds,
      }, (cert, key) => serveCertificate(cert, key), log, metrics) : undefined;
  if (certificate) controllers.push(certificate.keeper);
  // In a pod, the holder labels itself: the webhook's Service selects it (docs/design.md#admission).
  const pod = ownPod();
  const label = config.admission.listen && config.leaderElection.enabled && api && pod ? holderLabel(api, pod, log, metrics) : undefined;
  if (label) {
    label.clear();
    controllers.push(label);
  }
  // Whether this replica holds the Lease: admission decides only there what reads shared counters.
  const lead = { holds: !config.leaderElection.enabled || !api };
  const writers = controllers.length > 0 && api ? startWriters(api, config, log, metrics, controllers, lead) : undefined;
  registerStateGauges(metrics, source, () => service.state.reservations.size());
  registerHealthGauges(metrics, layoutHealth.all, config.metrics.maxWorkloadSeries);
  let serving = true;
  source.start();
  layoutHealth.start();
  const limits = config.http;
  // Connections counted, and TLS files read again as cert-manager renews them (docs/operations.md#the-admission-certificate).
  const setting = (name: keyof typeof LISTENER_SETTINGS) => ({ name, ...LISTENER_SETTINGS[name] });
  const listenerHooks = (listener: keyof typeof LISTENER_SETTINGS) => ({
    setting: setting(listener),
    onConnection: () => metrics.connections.inc({ listener }), onDrop: () => metrics.connectionsDropped.inc({ listener }),
    onTlsReload: (err?: Error) => (err ? log.warn({ listener, err: err.message }, 'TLS files not read again; the ones served stay')
      : log.info({ listener }, 'TLS files changed: new connections get the new certificate')),
  });
  const ext = await listen(extenderRoutes(extender, metrics, log, config.extender), config.extender.listen, { tls: config.extender.tls, limits, ...listenerHooks('extender') });
  const auth = config.admin.authorization === 'kubernetes' && api ? kubernetesAuthorizer(api) : undefined;
  const admin = await listen(adminRoutes({
    source, views: debugViews(service, source), metrics, serving: () => serving, auth, layoutHealth, repair, rollouts, gate, policy,
    policyAgreement: (p) => policyAgreement(source, service, p),
  }), config.admin.listen, { limits, setting: setting('admin') });
  const probes = config.admin.probeListen
    ? await listen(probeRoutes({ source, serving: () => serving, policy }), config.admin.probeListen,
        { limits, setting: setting('probe') }) : undefined;
  const pickerAuth = config.picker.authorization === 'kubernetes' && api ? (auth ?? kubernetesAuthorizer(api)) : undefined;
  const picker = config.picker.listen
    ? await listen(pickerRoutes(extender, metrics, log, config.extender.pickerBodyLimitBytes, pickerAuth), config.picker.listen, { tls: config.picker.tls, limits, ...listenerHooks('picker') })
    : undefined;
  const admissionDeps = {
    service, leading: () => lead.holds, gateEnabled: !!gate, applySubsetPatches: config.workloadSpread.writeStatus, log,
    ownerArrival: ownerArrival(source, OWNER_ARRIVAL_MS),
  };
  const admission = config.admission.listen
    ? await listen(admissionRoutes(admissionDeps, metrics, log, config.admission.bodyLimitBytes,
        [evictionRoute({ service, leading: () => lead.holds, log }, metrics, config.admission.bodyLimitBytes)]), config.admission.listen,
      { tls: certificate ? { managed: true } : { ...config.admission.tls, clientCAFile: '' }, limits: { ...limits, maxConnections: config.admission.maxConnections }, ...listenerHooks('admission') })
    : undefined;
  if (admission && certificate) {
    serveCertificate = admission.useCertificate;
    certificate.startLoading();
  }
  log.info({ admission: admission?.url, extender: ext.url, admin: admin.url, page: new URL('/ui', admin.url).href, probes: probes?.url, picker: picker?.url, adminAuthorization: config.admin.authorization, source: source.describe() }, 'zonekeeper serving');
  return {
    extender: ext, admin, probes, picker, admission, source, metrics,
    async stop() {
      // One deadline for everything: listeners close together, then the writers get what is left.
      const deadline = systemClock.now() + config.shutdownGraceSeconds * 1000;
      serving = false;
      await layoutHealth.stop();
      certificate?.stopLoading();
      await Promise.all([ext.close(deadline), admin.close(deadline), probes?.close(deadline), picker?.close(deadline), admission?.close(deadline)]);
      await byDeadline(writers?.stop(), deadline);
      await byDeadline(label?.close(), deadline);
      await byDeadline(source.stop(), deadline);
      await byDeadline(actuator.settle(), deadline);
    },
  };
}
