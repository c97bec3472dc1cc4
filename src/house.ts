import type { Actuator } from './actuator/actuator.js';
import type { ApiClient } from './cluster/apiClient.js';
import type { SnapshotSource } from './cluster/source.js';
import type { FederationView } from './cluster/memberClusters.js';
import { systemClock, type Clock } from './common/clock.js';
import { servesEvictions, type Config } from './common/config.js';
import type { Logger } from './common/logger.js';
import { admissionRoutes } from './admission/admissionRoutes.js';
import { ownerArrival } from './admission/ownerArrival.js';
import { deletionCostController } from './controllers/deletionCosts.js';
import { evictPod, type EvictionGate } from './controllers/eviction.js';
import { holderLabel, ownPod } from './controllers/holderLabel.js';
import { instancePodAnnotator } from './controllers/instancePods.js';
import { healthTracker } from './controllers/layoutHealth.js';
import { podAnnotationController } from './controllers/podAnnotations.js';
import { repairController } from './controllers/repair.js';
import { webhookCertificate } from './controllers/webhookCertificate.js';
import { workloadSpreadAdoptionController } from './controllers/workloadSpreadAdoption.js';
import { workloadSpreadStatusController } from './controllers/workloadSpreadStatus.js';
import { zoneRolloutController } from './controllers/zoneRollout.js';
import { eventRecorder } from './actuator/events.js';
import { federationService, type FederationService } from './decision/bindingDecisions.js';
import { decisionService } from './decision/service.js';
import { subsetPatchSetting } from './decision/gatedSubsetPatch.js';
import { bindingScheduler } from './karmada/bindingScheduler.js';
import { conversionRoute } from './admission/conversion.js';
import { evictionRoute } from './eviction/evictionRoute.js';
import { createExtender } from './extender/extender.js';
import type { CallerCheck } from './http/callers.js';
import { zoneGateKeeper } from './gate/keeper.js';
import { registerHealthGauges, registerStateGauges, type Metrics } from './metrics/metrics.js';
import { policyAgreement, policyCheckController } from './policy/check.js';
import { seatTableController, tableWrites } from './policy/tableWriter.js';
import type { AdminDeps } from './server/adminRoutes.js';

// The house (docs/design.md#one-decision-its-transports): every part built once and connected, for main.ts and the
// tests alike. The cluster view and its writes come in; the decision service, its transports and
// the controllers (every background write, started in the Lease's holder) come out.

/** A writer that runs only in the Lease's holder. */
export interface LeaderController {
  start(): void;
  stop(): Promise<void>;
}

export interface HouseDeps {
  config: Config;
  source: SnapshotSource;
  actuator: Actuator;
  /** The API server, when a cluster is watched (no controller writes to a file source). */
  api?: ApiClient;
  metrics: Metrics;
  log: Logger;
  clock?: Clock;
  /** Whether the API server serves MutatingAdmissionPolicies (asked at start); undefined: could not tell or no cluster. */
  policyServed?: boolean;
  /** Whether this replica holds the Lease (or runs alone). */
  leading(): boolean;
}

/** How long admission waits for the watch to show a new pod's ReplicaSet or StatefulSet: well under the webhook's 5 s timeout. */
const OWNER_ARRIVAL_MS = 1_000;

export function house(deps: HouseDeps) {
  const { config, source, actuator, api, metrics, log, clock } = deps;
  // The one decision service (one reservation ledger, one decision log), handed to every transport.
  const service = decisionService({ source, actuator, metrics, log, config, clock });
  const { memory } = service;
  const settings = () => ({ ...config.placement });
  // zonekeeper's own evictions (repair, fallbacks, rescheduling, rollouts) ask the zone disruption budget first, as the holder.
  const evictionGate: EvictionGate = async (pod, by) => service.eviction({ ...pod, dryRun: false, leading: true, by, asker: 'zonekeeper' });
  const events = { record: actuator.recordEvent };
  const lists = { pendingFreezes: actuator.pendingFreezes };
  const controllers: LeaderController[] = [];
  const add = <T extends LeaderController>(c: T | undefined): T | undefined => (c && controllers.push(c), c);

  // Health is kept in every replica (metrics, the page); only the Lease's holder records its Events.
  const layoutHealth = healthTracker(source, memory, actuator.recordEvent,
    { ...config.health, rollout: config.zoneRollout.enabled ? config.zoneRollout : undefined }, log);
  registerStateGauges(metrics, source, service.views.reservationCount);
  registerHealthGauges(metrics, layoutHealth.all, config.metrics.maxWorkloadSeries);
  // A file source has no Lease and no API server: this process records them, to its log (memoryActuator).
  if (config.health.events && !api) layoutHealth.startEvents();
  if (config.deletionCost.enabled && !api) log.warn('deletion costs need a cluster to write to; not managed for a file source');
  if (config.rebalance.enabled && !api) log.warn('rebalance needs a cluster to evict in; off for a file source');

  if (api) {
    if (config.deletionCost.enabled) add(deletionCostController(api, source, settings(), config.deletionCost, log, metrics, lists));
    if (config.instanceIds.keepPods) {
      add(podAnnotationController(api, source, instancePodAnnotator(actuator, settings(), lists, log), config.instanceIds, log, metrics));
    }
    if (config.workloadSpread.writeStatus) {
      // Pods a standalone WorkloadSpread did not place get Kruise's mark, paced as deletion costs are.
      add(workloadSpreadAdoptionController(api, source, settings(), { intervalSeconds: config.workloadSpread.statusIntervalSeconds,
        patchesPerSecond: config.deletionCost.patchesPerSecond }, log, metrics, lists));
      add(workloadSpreadStatusController(api, source, settings(), memory.reservations, events,
        { intervalSeconds: config.workloadSpread.statusIntervalSeconds, patchesApplied: !!config.admission.listen,
          rescheduleEvictionsPerMinute: config.workloadSpread.rescheduleEvictionsPerMinute, rescheduleDryRun: config.workloadSpread.rescheduleDryRun,
          evictionGate },
        log, metrics, lists));
    }
  }
  if (config.health.events && api) add({ start: layoutHealth.startEvents, stop: layoutHealth.stopEvents });
  const repair = config.rebalance.enabled && api
    ? add(repairController(api, source, layoutHealth, memory, events, { ...config.rebalance, gate: evictionGate }, log, metrics)) : undefined;
  // Zone-by-zone rollouts: every eviction through the Eviction API (PodDisruptionBudgets and the zone budget decide).
  const rollouts = config.zoneRollout.enabled && api
    ? add(zoneRolloutController({
        api, source, settings: settings(), lists, evict: (pod) => evictPod(api, pod, log, { judge: evictionGate, by: 'zonekeeper zone-by-zone rollout' }), events,
        opts: config.zoneRollout, log, metrics,
      })) : undefined;
  const gate = config.gate.enabled && api
    ? add(zoneGateKeeper({
        api, source, decide: (pod) => service.spec.ungate(pod), skipForSuccessor: (fb) => service.fallbackExpired(fb),
        events, subsetPatchesOwned: config.workloadSpread.writeStatus, evictionGate, opts: config.gate, log, metrics,
        subsetPatchSetting: config.workloadSpread.writeStatus ? subsetPatchSetting(config.admission) : undefined,
      })) : undefined;

  // The policy transport (docs/design.md#the-policy): the seat table, only where the API server serves the policy that reads it.
  const policy = api ? { apiServed: deps.policyServed, seatTable: !!config.policy.seatTable && deps.policyServed === true } : undefined;
  /** The tables this holder wrote: the check tells a pod decided from an older one. */
  const tables = tableWrites();
  if (api && policy?.seatTable) {
    add(seatTableController(api, source, settings(), service.spec.seatOf, config.policy, events, log, metrics, undefined, tables));
    log.info({ configMap: config.policy.configMapName }, 'policy transport on: the API server serves MutatingAdmissionPolicies; the Lease holder publishes seat tables');
  } else if (policy && config.policy.seatTable) {
    log.warn({ apiServed: policy.apiServed ?? 'unknown' }, 'policy transport off: the API server does not serve admissionregistration.k8s.io/v1 mutatingadmissionpolicies (Kubernetes 1.36+); no seat table is published');
  } else if (policy) {
    log.info({ apiServed: policy.apiServed ?? 'unknown' }, 'policy transport off (policy.seatTable); whether the API server serves MutatingAdmissionPolicies (Kubernetes 1.36+) is in apiServed');
  }
  // Every pod the policy decided (a table written by this or an earlier holder) is checked against zonekeeper's own decision.
  if (api) add(policyCheckController(source, service, events, log, metrics, undefined, tables));

  // admission.certificate: the holder keeps the Secret and the caBundle; every replica serves what the Secret holds.
  const managed = config.admission.certificate;
  const serving = { certificate: (_cert: string, _key: string): void => {} };
  const certificate = config.admission.listen && managed.secret && api
    ? webhookCertificate(api, {
        secret: { namespace: managed.secret.slice(0, managed.secret.indexOf('/')), name: managed.secret.slice(managed.secret.indexOf('/') + 1) },
        webhookConfiguration: managed.webhookConfiguration, evictionWebhookConfiguration: managed.evictionWebhookConfiguration,
        conversionCrd: managed.conversionCrd,
        names: { dnsNames: managed.dnsNames, ipAddresses: managed.ipAddresses }, validityDays: managed.validityDays, renewBeforeDays: managed.renewBeforeDays,
        checkIntervalSeconds: managed.checkIntervalSeconds,
      }, (cert, key) => serving.certificate(cert, key), log, metrics) : undefined;
  if (certificate) add(certificate.keeper);
  // In a pod, the holder labels itself: the webhook's Service selects it (docs/design.md#admission).
  const pod = ownPod();
  const label = config.admission.listen && config.leaderElection.enabled && api && pod ? holderLabel(api, pod, log, metrics) : undefined;
  if (label) {
    label.clear();
    add(label);
  }

  const extender = createExtender(service, { source, log, config });
  const admin: Omit<AdminDeps, 'metrics' | 'serving' | 'auth'> = {
    source, views: service.views, layoutHealth, repair, rollouts, gate, policy,
    policyAgreement: (p) => policyAgreement(source, service, p),
  };
  // The eviction gate only where configured (servesEvictions); `caller`: whether a review came from kube-apiserver (http/callers.ts).
  const webhooks = (bodyLimitBytes: number, caller: CallerCheck) => admissionRoutes({
    service, leading: deps.leading, gateEnabled: !!gate, caller, log, ownerArrival: ownerArrival(source, OWNER_ARRIVAL_MS),
  }, metrics, log, bodyLimitBytes,
  [...servesEvictions(config.admission) ? [evictionRoute({ service, leading: deps.leading, caller, log }, metrics, bodyLimitBytes)] : [],
    // zonekeeper's WorkloadSpread CRD converts v1alpha1 and v1beta1 here: pure, so served to any caller.
    conversionRoute(metrics, bodyLimitBytes)]);
  return { service, extender, layoutHealth, controllers, admin, webhooks, certificate, serving, label, repair, rollouts, gate, policy };
}

export interface FederationHouseDeps {
  /** Karmada and its members, watched or read from a file. */
  view: FederationView;
  config: Config;
  metrics: Metrics;
  log: Logger;
  /** The Karmada control plane, when its bindings are written (`zonekeeper karmada`); none for the audit. */
  api?: ApiClient;
  clock?: Clock;
}

export interface FederationHouse { service: FederationService; scheduler?: LeaderController }

/** Events waiting behind the bindings' writes: a mass re-plan's two per binding, each kept as a few short strings (about 1 KiB). */
const FEDERATION_EVENTS_QUEUED = 4096;

/** The federation's house (docs/design.md#across-clusters): its one decision service and, where Karmada is written, the binding scheduler. */
export function federationHouse(deps: FederationHouseDeps & { api: ApiClient }): FederationHouse & { scheduler: LeaderController };
export function federationHouse(deps: FederationHouseDeps): FederationHouse;
export function federationHouse(deps: FederationHouseDeps): FederationHouse {
  const { view, config, metrics, log, api } = deps;
  const service = federationService(view, config.karmada, metrics, deps.clock ?? systemClock);
  if (!api) return { service };
  // Events wait while bindings are written (one at a time then), up to a whole re-plan's worth: 2 per binding.
  let writing = () => false;
  const events = eventRecorder(api, log, metrics, { busy: () => writing(), queued: FEDERATION_EVENTS_QUEUED });
  const scheduler = bindingScheduler({ service, view, api, events, config: config.karmada, log, metrics });
  writing = scheduler.writing;
  return { service, scheduler };
}
