import type { Logger } from 'pino';
import type { EventRecorder } from '../actuator/events.js';
import { ZONE_LABEL } from '../cluster/annotations.js';
import { nodeSelection } from '../cluster/nodeNeeds.js';
import type { SlimPod } from '../cluster/objects.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { Timers } from '../common/clock.js';
import type { DecisionService } from '../decision/service.js';
import { POLICY_DISAGREEMENT_REASONS, type Metrics } from '../metrics/metrics.js';
import { podModel } from '../placement/model.js';
import { reconciler } from '../common/reconciler.js';
import type { TableWrites } from './tableWriter.js';

// The policy transport checked (docs/design.md#the-policy): every pod kube-apiserver's
// MutatingAdmissionPolicy decided (`zonekeeper.io/decided-by: policy`) is decided again by
// zonekeeper, as admission would decide the pod as created, and a difference is reported:
// zonekeeper_policy_disagreements_total and a PolicyDisagrees Event, in the Lease holder. A pod
// decided from a table older than one this holder wrote or found well before the pod was created says
// kube-apiserver reads an old table: zonekeeper_policy_stale_tables_total, a PolicyReadStaleTable Event.

/** Why zonekeeper decides otherwise than the policy: a small fixed set (the metric's label). */
type DisagreementReason = typeof POLICY_DISAGREEMENT_REASONS[number];

/** The zone the policy wrote for a pod, against zonekeeper's own decision for it. */
export type PolicyAgreement =
  | { agrees: true; topologyKey: string; zone: string; why: string }
  /** `zonekeeper`: the zone it decides (or `no zone`, a subset); `why`: its reason. */
  | { agrees: false; reason: DisagreementReason; topologyKey: string; policyZone: string | undefined; zonekeeper: string; why: string }
  /** Zonekeeper cannot decide the pod now (cache not ready, a volume that may move, its workload not cached): checked again later. */
  | { agrees: undefined; why: string };

/** The pod as its controller created it, before the policy wrote `topologyKey` into its nodeSelector. */
function asCreated(pod: SlimPod, topologyKey: string): SlimPod {
  const s = pod.selection;
  if (!s || !(topologyKey in s.nodeSelector)) return pod;
  const { [topologyKey]: _written, ...nodeSelector } = s.nodeSelector;
  const affinity = s.affinity && { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: s.affinity } } };
  return { ...pod, selection: nodeSelection({ nodeSelector, affinity }, false) };
}

/**
 * What zonekeeper decides for a policy-decided pod, against the zone the policy wrote: admission's
 * decision (a dry run, as the Lease holder) for the pod as created, so that a bound volume decides
 * as it does for admission, never read from the seat table, which is what is checked.
 */
export async function policyAgreement(source: SnapshotSource, service: Pick<DecisionService, 'spec' | 'settings'>, pod: SlimPod): Promise<PolicyAgreement> {
  const model = podModel(pod, source.snapshot, service.settings);
  if (model && pod.owner && model.workload && model.workload.uid !== pod.owner.uid) {
    return { agrees: undefined, why: `the cache holds another ${pod.owner.kind} ${pod.owner.name} (UID ${model.workload.uid}) than the pod's owner` };
  }
  const topologyKey = model?.zones().topologyKey ?? ZONE_LABEL;
  const policyZone = pod.selection?.nodeSelector[topologyKey];
  const d = service.spec.wouldAdmit(asCreated(pod, topologyKey));
  if (d.kind === 'gate' || d.kind === 'refused') return { agrees: undefined, why: d.why };
  if (d.kind === 'as-is') return { agrees: false, reason: 'not-managed', topologyKey, policyZone, zonekeeper: 'no zone', why: d.why };
  if (d.kind === 'subset') {
    return { agrees: false, reason: 'other-rule', topologyKey, policyZone, zonekeeper: `WorkloadSpread ${d.workloadSpread}'s subset ${d.subset}`, why: d.why };
  }
  if (d.topologyKey === topologyKey && d.zone === policyZone) return { agrees: true, topologyKey, zone: d.zone, why: d.why };
  return { agrees: false, reason: 'other-zone', topologyKey, policyZone, zonekeeper: d.topologyKey === topologyKey ? d.zone : `${d.topologyKey} ${d.zone}`, why: d.why };
}

/** How long a pod's first event waits before its check, gathering its workload's and claims' events. */
const GATHER_MS = 1000;
/** Pods zonekeeper could not decide yet are tried again at least this often. */
const RESYNC_MS = 5 * 60_000;
/** How long after a table's write kube-apiserver may still apply the one before (its informer's lag; creationTimestamp is in whole seconds). */
const STALE_GRACE_MS = 10_000;

/**
 * Checks every policy-decided pod the cache shows, once per UID (forgotten when the pod is
 * deleted: memory bounded by the cached pods), fed by pod events; runs between start and stop
 * (the Lease holder), so only the holder counts and writes Events.
 */
export function policyCheckController(
  source: SnapshotSource, service: DecisionService, events: Pick<EventRecorder, 'record'>, log: Logger, metrics: Metrics, clock?: Timers,
  writes?: Pick<TableWrites, 'newerBefore'>,
) {
  /** Policy-decided pods seen and not checked yet, and those checked, by UID. */
  const pending = new Set<string>();
  const checked = new Set<string>();
  /** The newest table generation a stale read was told for, by namespace: one Event per namespace and table, not per pod. */
  const told = new Map<string, number>();

  /** Whether the policy decided the pod from a table older than one this holder wrote (or found) STALE_GRACE_MS before the pod was created. */
  function staleRead(pod: SlimPod): void {
    if (!writes || pod.seatTableGeneration === undefined) return;
    const newer = writes.newerBefore(pod.namespace, pod.seatTableGeneration, pod.createdAt, STALE_GRACE_MS);
    if (!newer) return;
    metrics.policyStaleTables.inc();
    if ((told.get(pod.namespace) ?? 0) >= newer.generation) return;
    told.set(pod.namespace, newer.generation);
    const ago = Math.round((pod.createdAt - newer.at) / 1000);
    log.warn({ pod: `${pod.namespace}/${pod.name}`, read: pod.seatTableGeneration, written: newer.generation }, 'the policy decided a pod from an old seat table');
    events.record(pod, 'Warning', 'PolicyReadStaleTable',
      `the MutatingAdmissionPolicy decided this pod from the seat table written at ${new Date(pod.seatTableGeneration).toISOString()}; zonekeeper wrote a newer one ${ago} s before the pod was created: `
      + 'kube-apiserver is not reading the table (a binding deleted and added again, kubernetes#130887: restart kube-apiserver)');
  }

  async function reconcile(uid: string): Promise<void> {
    if (!pending.has(uid)) return;
    const pod = source.snapshot.podByUid(uid);
    if (!pod || !pod.decidedByPolicy || pod.terminating) {
      pending.delete(uid);
      return;
    }
    const a = await policyAgreement(source, service, pod);
    if (a.agrees === undefined) return;
    pending.delete(uid);
    checked.add(uid);
    if (a.agrees) return;
    metrics.policyDisagreements.inc({ reason: a.reason });
    const policyZone = a.policyZone ?? 'no zone';
    log.warn({ pod: `${pod.namespace}/${pod.name}`, reason: a.reason, policyZone, zonekeeper: a.zonekeeper }, 'the policy decided a pod otherwise than zonekeeper');
    events.record(pod, 'Warning', 'PolicyDisagrees',
      `the MutatingAdmissionPolicy wrote ${a.topologyKey} ${policyZone} from the seat table; zonekeeper decides ${a.zonekeeper}: ${a.why}`);
  }

  const queue = reconciler({
    keys: () => [...pending], reconcile, resyncMs: RESYNC_MS, ready: () => source.ready(), clock, retryBaseMs: 1000, retryMaxMs: 60_000,
    onError: (uid, err) => log.warn({ uid, err: err.message }, 'policy-decided pod not checked; will retry'),
  });
  source.store.onPod((type, pod) => {
    if (type === 'delete') {
      pending.delete(pod.uid);
      checked.delete(pod.uid);
      queue.forget(pod.uid);
      return;
    }
    if (!pod.decidedByPolicy || checked.has(pod.uid)) return;
    // As it is first seen, by the holder (the one whose writes it knows).
    if (!pending.has(pod.uid) && queue.running()) staleRead(pod);
    pending.add(pod.uid);
    queue.addAfter(pod.uid, GATHER_MS);
  });
  return {
    ...queue.controller(),
    /** Whether the pod (by UID) was checked: for tests and /debug views. */
    checked: (uid: string) => checked.has(uid),
  };
}
