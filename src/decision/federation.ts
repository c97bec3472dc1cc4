import type { FederationView } from '../cluster/federation.js';
import { EVEN_CLUSTERS, bindingKey, type ClusterPreferences, type SlimBinding } from '../cluster/karmada.js';
import type { Clock } from '../common/clock.js';
import type { Config } from '../common/config.js';
import type { Metrics } from '../metrics/metrics.js';
import { ordinalStarts, planBinding, sameClusters, type BindingPlan, type MemberShare } from '../placement/clusterDivision.js';
import { NOT_SYNCED, STALE } from './recording.js';

// The decision for a Karmada binding (docs/design.md#across-clusters): readiness read, the one planner asked,
// the answer recorded. The Karmada transport (src/karmada/) only decodes, calls `plan` and writes.

type BindingVerdict =
  | { outcome: 'wait'; key: string; why: string }
  | { outcome: 'skip'; key: string; why: string }
  | { outcome: 'refused'; key: string; binding: SlimBinding; why: string }
  | {
    outcome: 'plan'; key: string; binding: SlimBinding; plan: Extract<BindingPlan, { ok: true }>;
    /** For a StatefulSet: every member's first ordinal, and whether a member about to get replicas has no range in Karmada yet. */
    ordinals: { starts: Record<string, number>; missing: string[] } | undefined;
    /** Nothing to write: spec.clusters and the applied placement already say this. */
    unchanged: boolean;
  };

/** One binding's last plan, for /debug/federation, `zonekeeper audit` and the metrics. */
interface FederatedWorkload {
  binding: string;
  workload: string;
  replicas: number;
  at: number;
  outcome: BindingVerdict['outcome'];
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

export function federationService(view: FederationView, config: Config['karmada'], metrics: Metrics, clock: Clock): FederationService {
  const last = new Map<string, FederatedWorkload>();

  function record(key: string, b: SlimBinding | undefined, v: BindingVerdict): BindingVerdict {
    metrics.federationPlans.inc({ outcome: v.outcome === 'plan' && v.unchanged ? 'unchanged' : v.outcome });
    if (!b || v.outcome === 'skip') return v;
    const plan = v.outcome === 'plan' ? v.plan : undefined;
    const prior = last.get(key);
    last.set(key, {
      binding: key, workload: `${b.resource.kind} ${b.resource.namespace ? `${b.resource.namespace}/` : ''}${b.resource.name}`, replicas: b.replicas,
      at: clock.now(), outcome: v.outcome, why: 'why' in v ? v.why : summary(plan!), unplaced: plan?.unplaced ?? prior?.unplaced ?? 0,
      members: plan?.members ?? prior?.members ?? [], ...(v.outcome === 'plan' && v.ordinals ? { ordinals: v.ordinals.starts } : {}),
    });
    if (plan) {
      metrics.federationUnplaced.set({ binding: key }, plan.unplaced);
      for (const m of plan.members) metrics.federationReplicas.set({ binding: key, cluster: m.cluster }, m.replicas);
    }
    return v;
  }

  function preferencesOf(b: SlimBinding): { ok: true; spec: ClusterPreferences } | { ok: false; error: string } {
    const p = b.policy ? view.policy(b.policy) : undefined;
    if (!p?.preferences) return { ok: true, spec: EVEN_CLUSTERS };
    return p.preferences.ok ? p.preferences : { ok: false, error: `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}: zonekeeper.io/cluster-preferences: ${p.preferences.error}` };
  }

  function plan(key: string): BindingVerdict {
    if (!view.ready()) return record(key, undefined, { outcome: 'wait', key, why: view.synced() ? STALE : NOT_SYNCED });
    const b = view.binding(key);
    if (!b) return record(key, undefined, { outcome: 'skip', key, why: 'gone' });
    if (b.schedulerName !== config.schedulerName) return { outcome: 'skip', key, why: `scheduled by ${b.schedulerName}` };
    if (b.deleting || b.suspended) return record(key, b, { outcome: 'skip', key, why: b.deleting ? 'being deleted' : 'scheduling suspended' });
    // Never a plan that drops part of what the policy asks: refused whole, the field named.
    if (b.unsupported) {
      return record(key, b, { outcome: 'refused', key, binding: b, why: `spec.placement.${b.unsupported}: zonekeeper does not carry this out; leave such a policy to karmada-scheduler` });
    }
    const prefs = preferencesOf(b);
    if (!prefs.ok) return record(key, b, { outcome: 'refused', key, binding: b, why: prefs.error });
    const sts = isStatefulSet(b);
    const members = view.clusters().map((cluster) => ({ cluster, reading: view.reading(cluster.name, b.resource) }));
    const p = planBinding(b, prefs.spec, members, {
      pendingMs: config.pendingSeconds * 1000, keepWaiting: config.keepWaiting, stride: sts ? config.ordinalStride : undefined,
    }, clock.now());
    if (!p.ok) return record(key, b, { outcome: 'refused', key, binding: b, why: p.message });
    let ordinals: { starts: Record<string, number>; missing: string[] } | undefined;
    if (sts) {
      const seen = view.ordinalOverride(b.resource.namespace, b.resource.name)?.starts ?? {};
      const starts = ordinalStarts(seen, p.clusters, config.ordinalStride);
      ordinals = { starts, missing: p.clusters.filter((c) => !(c.name in seen)).map((c) => c.name) };
    }
    const unchanged = sameClusters(b.clusters, p.clusters) && b.appliedPlacement === b.placement && b.observedGeneration === b.generation
      && !(b.rescheduleTriggeredAt > b.lastScheduledTime);
    return record(key, b, { outcome: 'plan', key, binding: b, plan: p, ordinals, unchanged });
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
export function summary(p: Extract<BindingPlan, { ok: true }>): string {
  const parts = p.members.filter((m) => m.replicas > 0 || m.assigned > 0).map((m) => `${m.cluster}=${m.replicas}`);
  return `${parts.join(' ') || 'no member'}${p.unplaced ? ` (${p.unplaced} unplaced)` : ''}`;
}
