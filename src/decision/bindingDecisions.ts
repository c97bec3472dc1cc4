import type { FederationView } from '../cluster/memberClusters.js';
import { bindingKey, type ClusterPreferences, type SlimBinding, type SlimPropagationPolicy, type TargetCluster } from '../cluster/karmada.js';
import type { Clock } from '../common/clock.js';
import type { Config } from '../common/config.js';
import type { Metrics } from '../metrics/metrics.js';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { NodeNeeds, SlimNode } from '../cluster/objects.js';
import { planBinding } from '../placement/bindingPlan.js';
import { misfitOf, needsKey } from '../placement/nodeFit.js';
import { ordinalRanges, sameClusters, type BindingPlan, type MemberShare } from '../placement/clusterDivision.js';
import { NOT_SYNCED, STALE } from './recording.js';

// The decision for a Karmada binding (docs/design.md#across-clusters): readiness read, the one planner asked,
// the answer recorded. The Karmada transport (src/karmada/) only decodes, calls `plan` and writes.

/** A Karmada event, recorded on the binding and on its resource template as karmada-scheduler records it. */
interface BindingEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

/** The Scheduled condition as karmada-scheduler writes it. */
export interface ScheduledCondition { status: 'True' | 'False'; reason: string; message: string }

/**
 * Everything one turn writes for a binding, in order: a StatefulSet's missing ordinal ranges first (and then
 * nothing else this turn), else spec.clusters (null: emptied; undefined: as it is), the observed
 * clusterAffinities term, the Scheduled condition with the observed generation, and the events.
 */
interface BindingWrites {
  ordinals: { starts: Record<string, number>; resourceVersion: string | undefined } | undefined;
  clusters: TargetCluster[] | null | undefined;
  affinityName: string | undefined;
  condition: ScheduledCondition;
  events: BindingEvent[];
  /** The events go on the binding alone: its resource template is not one it may name. */
  bindingOnly?: true;
}

type BindingVerdict =
  | { outcome: 'wait'; key: string; why: string }
  | { outcome: 'skip'; key: string; why: string }
  | { outcome: 'refused' | 'plan' | 'unchanged'; key: string; binding: SlimBinding; why: string; writes: BindingWrites };

/** An object as its kind and name say it: `Deployment ns/name`, `ClusterPropagationPolicy name`. */
const kindAndName = (p: { kind: string; namespace?: string; name: string }) => `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}`;

/** The Scheduled condition of a binding that cannot be scheduled (its message as long as the condition holds). */
const failed = (reason: string, message: string): ScheduledCondition => ({ status: 'False', reason, message: message.slice(0, 1024) });

/**
 * The Warning a refusal records, once: a binding whose Scheduled condition says it already is not told again on
 * every turn (a resync, a member's pods changing).
 */
function failure(b: SlimBinding, c: ScheduledCondition): BindingEvent[] {
  const s = b.conditions.find((x) => x.type === 'Scheduled');
  return s && s.status === c.status && s.reason === c.reason && s.message === c.message ? [] : [{ type: 'Warning', reason: 'ScheduleBindingFailed', message: c.message }];
}

/** One binding's last plan, for /debug/federation, `zonekeeper audit` and the metrics. */
interface FederatedWorkload {
  binding: string;
  workload: string;
  replicas: number;
  at: number;
  outcome: BindingVerdict['outcome'];
  /** The clusterAffinities term the plan used ('' without clusterAffinities). */
  affinity: string;
  why: string;
  unplaced: number;
  members: MemberShare[];
  ordinals?: Record<string, number>;
}

export interface FederationService {
  /** Decides one binding now; nothing is written here. */
  plan(key: string): BindingVerdict;
  /** The bindings that name zonekeeper, by key. */
  keys(): string[];
  /** Every federated workload's last plan. */
  workloads(): FederatedWorkload[];
  /** A binding is gone: its record and series go. */
  forget(key: string): void;
}

const isStatefulSet = (b: SlimBinding) => b.resource.kind === 'StatefulSet' && b.resource.apiVersion === 'apps/v1';

/** karmada-scheduler's success message: `Result: {m1:2, m2:1}` (a ClusterResourceBinding's has no colon). */
const resultText = (b: SlimBinding, clusters: readonly TargetCluster[]) =>
  `Binding has been scheduled successfully. Result${b.kind === 'ClusterResourceBinding' ? '' : ':'} {${clusters.map((c) => `${c.name}:${c.replicas}`).join(', ')}}`;

/** How a refused binding gets scheduled: said in its condition and Event, never left silent. */
const HOW_TO = 'fix the policy (its spec or its zonekeeper.io/cluster-preferences annotation), or re-create it with schedulerName default-scheduler '
  + 'to hand it to karmada-scheduler (Karmada does not let a policy\'s schedulerName change in place)';

/** A ResourceBinding naming another namespace's resource was not made by Karmada's detector. */
const FOREIGN_HOW_TO = 'Karmada makes a ResourceBinding in its resource\'s namespace: delete this one';

/** Bytes of node-fit answers kept across plans (a tenant's affinity can be large; its answer is one set per member node set). */
const FIT_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Which nodes of a member take a workload's replicas, per distinct needs (affinity, tolerations), kept while the
 * member's nodes' names, labels and taints are unchanged (its nodesVersion): a plan rerun on every pod event judges a
 * large affinity once per node set, not per plan.
 */
function memberFits(): (needs: NodeNeeds) => (member: string, reading: { nodes: readonly SlimNode[]; nodesVersion: number }) => (n: SlimNode) => boolean {
  const cache = new LRUCache<string, Set<string>>({ maxSize: FIT_CACHE_BYTES, sizeCalculation: (v, k) => 2 * k.length + 64 * v.size + 64 });
  return (needs) => {
    // The needs by digest: a tenant's long affinity is hashed once per plan, and the cache holds 64 bytes of it per member.
    const digest = createHash('sha256').update(needsKey(needs)).digest('base64');
    const misfit = misfitOf(needs);
    return (member, reading) => {
      const key = `${member}\u0000${reading.nodesVersion}\u0000${digest}`;
      let set = cache.get(key);
      if (!set) cache.set(key, (set = new Set(reading.nodes.filter((n) => !misfit(n)).map((n) => n.name))));
      const fitting = set;
      return (n) => fitting.has(n.name);
    };
  };
}

export function federationService(view: FederationView, config: Config['karmada'], metrics: Metrics, clock: Clock): FederationService {
  const last = new Map<string, FederatedWorkload>();
  const fits = memberFits();

  function record(key: string, b: SlimBinding | undefined, v: BindingVerdict, plan?: BindingPlan): BindingVerdict {
    metrics.federationPlans.inc({ outcome: v.outcome });
    // A wait is recorded only for a binding it names (its policy not seen yet), so /debug/explain says why.
    if (!b || v.outcome === 'skip') return v;
    const done = plan?.ok ? plan : undefined;
    const prior = last.get(key);
    const ordinals = v.outcome !== 'wait' && v.writes.ordinals ? v.writes.ordinals.starts : prior?.ordinals;
    last.set(key, {
      binding: key, workload: kindAndName(b.resource), replicas: b.replicas,
      at: clock.now(), outcome: v.outcome, affinity: plan?.affinityName ?? b.observedAffinity, why: v.why,
      unplaced: done?.unplaced ?? prior?.unplaced ?? 0, members: plan?.members ?? prior?.members ?? [],
      ...(ordinals ? { ordinals } : {}),
    });
    if (done) {
      metrics.federationUnplaced.set({ binding: key }, done.unplaced);
      for (const m of done.members) metrics.federationReplicas.set({ binding: key, cluster: m.cluster }, m.replicas);
    }
    return v;
  }

  /** The policy's seed-002 preferences: undefined without the annotation (Karmada's own answer), or why they are refused. */
  function preferencesOf(p: SlimPropagationPolicy | undefined): { ok: true; spec: ClusterPreferences | undefined } | { ok: false; error: string } {
    if (!p?.preferences) return { ok: true, spec: undefined };
    return p.preferences.ok ? p.preferences : { ok: false, error: `${kindAndName(p)}: zonekeeper.io/cluster-preferences: ${p.preferences.error}` };
  }

  /** `foreign`: the binding names another namespace's resource, whose template is not its to record on. */
  function refused(key: string, b: SlimBinding, why: string, foreign = false): BindingVerdict {
    const message = `${why}; ${foreign ? FOREIGN_HOW_TO : HOW_TO}`;
    const condition = failed('Unschedulable', message);
    return record(key, b, { outcome: 'refused', key, binding: b, why, writes: {
      ordinals: undefined, clusters: undefined, affinityName: undefined, condition, events: failure(b, condition),
      ...(foreign ? { bindingOnly: true as const } : {}),
    } });
  }

  function plan(key: string): BindingVerdict {
    if (!view.ready()) return record(key, undefined, { outcome: 'wait', key, why: view.synced() ? STALE : NOT_SYNCED });
    const b = view.binding(key);
    if (!b) return record(key, undefined, { outcome: 'skip', key, why: 'gone' });
    if (b.schedulerName !== config.schedulerName) return { outcome: 'skip', key, why: `scheduled by ${b.schedulerName}` };
    if (b.deleting || b.suspended) return record(key, b, { outcome: 'skip', key, why: b.deleting ? 'being deleted' : 'scheduling suspended' });
    // A ResourceBinding speaks for its own namespace only: another's pods, OverridePolicies and Events are not its to move.
    if (b.kind === 'ResourceBinding' && b.resource.namespace !== b.namespace) {
      return refused(key, b, `spec.resource.namespace ${JSON.stringify(b.resource.namespace.slice(0, 63))} is not the binding's own namespace ${b.namespace}`, true);
    }
    // Never a plan that drops part of what the policy asks: refused whole, the field named.
    if (b.placement.unsupported) return refused(key, b, `spec.placement.${b.placement.unsupported}: zonekeeper does not carry this out`);
    // Its policy comes on another watch: planned without it, its preferences would be read as absent and the plan written.
    const policy = b.policy && view.policy(b.policy);
    if (b.policy && !policy) return record(key, b, { outcome: 'wait', key, why: `its ${kindAndName(b.policy)} not seen yet` });
    const prefs = preferencesOf(policy);
    if (!prefs.ok) return refused(key, b, prefs.error);
    const sts = isStatefulSet(b);
    const fitsOf = fits(b.needs);
    const members = view.clusters().map((cluster) => {
      const reading = view.reading(cluster.name, b.resource);
      return { cluster, reading: reading && { ...reading, fits: fitsOf(cluster.name, reading) } };
    });
    const p = planBinding(b, prefs.spec, members, {
      pendingMs: config.pendingSeconds * 1000, keepWaiting: config.keepWaiting, stride: sts ? config.ordinalStride : undefined,
    }, clock.now());
    const affinityName = b.placement.grouped && p.affinityName !== b.observedAffinity ? p.affinityName : undefined;
    if (!p.ok) {
      const condition = failed(p.reason, p.message);
      const writes: BindingWrites = {
        ordinals: undefined, clusters: p.clear && b.clusters.length ? null : undefined, affinityName: undefined, condition, events: failure(b, condition),
      };
      return record(key, b, { outcome: 'refused', key, binding: b, why: p.message, writes }, p);
    }
    let ordinals: BindingWrites['ordinals'];
    if (sts) {
      const ranges = ordinalRanges(b.resource, view.ordinalOverrides(b.resource.namespace, b.resource.name), p.clusters, config.ordinalStride);
      if (!ranges.ok) return refused(key, b, ranges.why);
      if (ranges.write) ordinals = { starts: ranges.starts, resourceVersion: ranges.write.resourceVersion };
    }
    const same = sameClusters(b.clusters, p.clusters) && b.appliedPlacement === b.placementText && !(b.rescheduleTriggeredAt > b.lastScheduledTime);
    const scheduled = b.conditions.find((c) => c.type === 'Scheduled');
    const current = same && !affinityName && scheduled?.status === 'True' && b.observedGeneration === b.generation;
    const why = summary(p);
    const writes: BindingWrites = {
      ordinals, clusters: same ? undefined : p.clusters, affinityName,
      condition: { status: 'True', reason: 'Success', message: 'Binding has been scheduled successfully.' },
      events: same ? [] : [
        { type: 'Normal', reason: 'ScheduleBindingSucceed', message: resultText(b, p.clusters) },
        ...(p.unplaced > 0 ? [{ type: 'Warning' as const, reason: 'ReplicasUnplaced', message: `${p.unplaced} of ${b.replicas} replicas fit no member cluster within its limits and room` }] : []),
      ],
    };
    return record(key, b, { outcome: current && !ordinals ? 'unchanged' : 'plan', key, binding: b, why, writes }, p);
  }

  return {
    plan,
    keys: () => view.bindings().filter((b) => b.schedulerName === config.schedulerName).map(bindingKey),
    workloads: () => [...last.values()].sort((a, b) => (a.binding < b.binding ? -1 : 1)),
    forget(key) {
      const w = last.get(key);
      last.delete(key);
      metrics.federationUnplaced.remove({ binding: key });
      for (const m of w?.members ?? []) metrics.federationReplicas.remove({ binding: key, cluster: m.cluster });
    },
  };
}

/** The plan in one line: `m1=3 m2=2 (1 unplaced)`. */
function summary(p: Extract<BindingPlan, { ok: true }>): string {
  const parts = p.members.filter((m) => m.replicas > 0 || m.assigned > 0).map((m) => `${m.cluster}=${m.replicas}`);
  return `${parts.join(' ') || 'no member'}${p.unplaced ? ` (${p.unplaced} unplaced)` : ''}`;
}
