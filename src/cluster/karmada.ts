import { z } from 'zod';
import { quantity } from './convert.js';
import type { KindName, KindSpec } from './kinds.js';
import { parsePlacement, type Placement } from './karmadaPlacement.js';
import { templateNeeds } from './nodeNeeds.js';
import type { NodeNeeds, Taint } from './objects.js';
import { str, stringMap, type Raw } from './rawFields.js';
import { parseJsonAnnotation } from './zonePreferences.js';

// Karmada's objects as zonekeeper reads them on a Karmada control plane (docs/design.md#across-clusters):
// the bindings it schedules, the member clusters, the policies that carry a workload's cluster
// preferences, and the OverridePolicies that hold a StatefulSet's ordinal ranges. Slim on arrival.

export const KARMADA_ANNOTATION = {
  /** On a (Cluster)PropagationPolicy: seed 002's preferences, clusters for zones. */
  clusterPreferences: 'zonekeeper.io/cluster-preferences',
  /** karmada-scheduler's record of the placement a plan was made for (the taint manager reads it). */
  appliedPlacement: 'policy.karmada.io/applied-placement',
  policyName: 'propagationpolicy.karmada.io/name',
  policyNamespace: 'propagationpolicy.karmada.io/namespace',
  clusterPolicyName: 'clusterpropagationpolicy.karmada.io/name',
} as const;

/** The label on the OverridePolicies zonekeeper owns (one per federated StatefulSet). */
export const ORDINALS_OWNER_LABEL = 'zonekeeper.io/ordinals-of';

const count = z.number().int().min(0).max(1_000_000);
// weight unset: the policy's static weight for the member, else 0.
const shareSchema = z.strictObject({ minReplicas: count.default(0), maxReplicas: count.optional(), weight: count.optional() })
  .refine((s) => s.maxReplicas === undefined || s.minReplicas <= s.maxReplicas, { message: 'minReplicas is above maxReplicas' });
const clusterPreferencesSchema = z.strictObject({
  rebalance: z.boolean().default(false),
  clusters: z.record(z.string().min(1).max(253), shareSchema),
});

export type ClusterPreferences = z.infer<typeof clusterPreferencesSchema>;
export type ParsedClusterPreferences = { ok: true; spec: ClusterPreferences } | { ok: false; error: string };

export function parseClusterPreferences(json: string): ParsedClusterPreferences {
  return parseJsonAnnotation(clusterPreferencesSchema, json);
}

export interface TargetCluster { name: string; replicas: number }

export interface SlimBinding {
  kind: 'ResourceBinding' | 'ClusterResourceBinding';
  /** '' for a ClusterResourceBinding. */
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  resourceVersion: string;
  schedulerName: string;
  /** The resource template it propagates. */
  resource: { apiVersion: string; kind: string; namespace: string; name: string; uid: string };
  replicas: number;
  /** Karmada's IsWorkload: it has replicas or replica requirements (else every member gets the object, no replicas). */
  workload: boolean;
  clusters: readonly TargetCluster[];
  /** `spec.placement` as JSON: what the applied-placement annotation records. */
  placementText: string;
  placement: Placement;
  appliedPlacement: string | undefined;
  /** `status.schedulerObservingAffinityName`: the clusterAffinities term the last plan used. */
  observedAffinity: string;
  policy: { kind: 'PropagationPolicy' | 'ClusterPropagationPolicy'; namespace: string; name: string } | undefined;
  /** Clusters its graceful-eviction tasks move it away from. */
  evictingFrom: readonly string[];
  /** ms since the epoch; 0 when unset. */
  rescheduleTriggeredAt: number;
  lastScheduledTime: number;
  observedGeneration: number;
  suspended: boolean;
  deleting: boolean;
  /** `status.conditions` as read: the status patch keeps the others beside `Scheduled`. */
  conditions: readonly Raw[];
  /** What one replica asks of a node (Karmada's `replicaRequirements`). */
  needs: NodeNeeds;
  request: { cpuMilli: number; memory: number };
}

/** A Cluster's taint; `addedAt`: its `timeAdded` (ms), from which a NoExecute toleration's seconds run. */
export type ClusterTaint = Taint & { addedAt?: number };

export interface SlimMemberCluster {
  name: string;
  /** Karmada's Ready condition: 'True', 'False', or 'Unknown' (none yet). */
  ready: string;
  readyMessage: string;
  taints: readonly ClusterTaint[];
  /** What a placement's clusterAffinity matches: its labels, `spec.provider` and `spec.region`. */
  labels: Readonly<Record<string, string>>;
  provider: string;
  region: string;
  deleting: boolean;
  apiEndpoint: string;
  secretRef: { namespace: string; name: string } | undefined;
  insecureSkipTLSVerification: boolean;
  zones: readonly string[];
  /** `Push` or `Pull`; and the name of the Secret whose token Karmada's cluster proxy sends the member ('' if none). */
  syncMode: string; impersonatorSecret: string;
}

export interface SlimPropagationPolicy {
  kind: 'PropagationPolicy' | 'ClusterPropagationPolicy';
  namespace: string;
  name: string;
  preferences: ParsedClusterPreferences | undefined;
}

/** An OverridePolicy as it bears on ordinals: the range start it gives each member, and the StatefulSets whose spec.ordinals it sets. */
export interface SlimOrdinalOverride {
  namespace: string;
  name: string;
  resourceVersion: string;
  /** The StatefulSet it numbers (the label zonekeeper writes); '' on another OverridePolicy. */
  owner: string;
  starts: Readonly<Record<string, number>>;
  /** StatefulSets (by name; '*' for a selector without one) whose spec.ordinals its plaintext overriders set. */
  setsOrdinalsOf: readonly string[];
}

/** The one name of the OverridePolicy zonekeeper owns for a StatefulSet's ordinal ranges. */
export const ordinalsPolicyName = (statefulSet: string): string => `${statefulSet}-zonekeeper-ordinals`.slice(0, 253);

const time = (v: unknown): number => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : 0;
};
const int = (v: unknown): number => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);
const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function slimBinding(kind: SlimBinding['kind']): (o: Raw) => SlimBinding {
  return (o) => {
    const meta: Raw = o.metadata ?? {};
    const spec: Raw = o.spec ?? {};
    const annotations = stringMap(meta.annotations);
    const claim: Raw = spec.replicaRequirements?.nodeClaim ?? {};
    const request: Raw = spec.replicaRequirements?.resourceRequest ?? {};
    const placement: Raw = spec.placement && typeof spec.placement === 'object' ? spec.placement : {};
    const policyName = annotations[KARMADA_ANNOTATION.policyName];
    const clusterPolicyName = annotations[KARMADA_ANNOTATION.clusterPolicyName];
    return {
      kind, namespace: str(meta.namespace), name: str(meta.name), uid: str(meta.uid), generation: int(meta.generation),
      resourceVersion: str(meta.resourceVersion), schedulerName: str(spec.schedulerName, 'default-scheduler'),
      resource: {
        apiVersion: str(spec.resource?.apiVersion), kind: str(spec.resource?.kind), namespace: str(spec.resource?.namespace), name: str(spec.resource?.name),
        uid: str(spec.resource?.uid),
      },
      replicas: int(spec.replicas), workload: int(spec.replicas) > 0 || !!spec.replicaRequirements,
      clusters: (Array.isArray(spec.clusters) ? spec.clusters : []).filter((c: Raw) => typeof c?.name === 'string').map((c: Raw) => ({ name: c.name as string, replicas: int(c.replicas) })),
      placementText: JSON.stringify(spec.placement ?? {}),
      placement: parsePlacement(placement),
      appliedPlacement: annotations[KARMADA_ANNOTATION.appliedPlacement],
      observedAffinity: str(o.status?.schedulerObservingAffinityName),
      policy: policyName !== undefined
        ? { kind: 'PropagationPolicy', namespace: annotations[KARMADA_ANNOTATION.policyNamespace] ?? str(meta.namespace), name: policyName }
        : clusterPolicyName !== undefined ? { kind: 'ClusterPropagationPolicy', namespace: '', name: clusterPolicyName } : undefined,
      evictingFrom: (Array.isArray(spec.gracefulEvictionTasks) ? spec.gracefulEvictionTasks : []).map((t: Raw) => str(t?.fromCluster)).filter(Boolean),
      rescheduleTriggeredAt: time(spec.rescheduleTriggeredAt), lastScheduledTime: time(o.status?.lastScheduledTime),
      observedGeneration: int(o.status?.schedulerObservedGeneration),
      suspended: spec.suspension?.scheduling === true, deleting: !!meta.deletionTimestamp,
      conditions: (Array.isArray(o.status?.conditions) ? o.status.conditions : []).filter((c: unknown) => c && typeof c === 'object').slice(0, 32),
      needs: templateNeeds({
        nodeSelector: claim.nodeSelector, tolerations: claim.tolerations,
        ...(claim.hardNodeAffinity ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: claim.hardNodeAffinity } } } : {}),
      }),
      request: { cpuMilli: Math.round(quantity(request.cpu) * 1000), memory: quantity(request.memory) },
    };
  };
}

function slimMemberCluster(o: Raw): SlimMemberCluster {
  const spec: Raw = o.spec ?? {};
  const ready = (Array.isArray(o.status?.conditions) ? o.status.conditions : []).find((c: Raw) => c?.type === 'Ready');
  return {
    name: str(o.metadata?.name), ready: str(ready?.status, 'Unknown'), readyMessage: str(ready?.message),
    taints: (Array.isArray(spec.taints) ? spec.taints : []).map((t: Raw) => {
      const addedAt = Date.parse(str(t?.timeAdded));
      return { key: str(t?.key), value: str(t?.value), effect: str(t?.effect), ...(Number.isFinite(addedAt) ? { addedAt } : {}) };
    }),
    labels: stringMap(o.metadata?.labels), provider: str(spec.provider), region: str(spec.region),
    deleting: !!o.metadata?.deletionTimestamp, apiEndpoint: str(spec.apiEndpoint),
    secretRef: spec.secretRef?.name ? { namespace: str(spec.secretRef.namespace), name: str(spec.secretRef.name) } : undefined,
    insecureSkipTLSVerification: spec.insecureSkipTLSVerification === true, zones: names(spec.zones ?? (spec.zone ? [spec.zone] : [])),
    syncMode: str(spec.syncMode), impersonatorSecret: str(spec.impersonatorSecretRef?.name),
  };
}

function slimPolicy(kind: SlimPropagationPolicy['kind']): (o: Raw) => SlimPropagationPolicy {
  return (o) => {
    const text = stringMap(o.metadata?.annotations)[KARMADA_ANNOTATION.clusterPreferences];
    const preferences = text === undefined ? undefined : parseClusterPreferences(text);
    return { kind, namespace: str(o.metadata?.namespace), name: str(o.metadata?.name), preferences };
  };
}

function slimOrdinalOverride(o: Raw): SlimOrdinalOverride {
  const starts: Record<string, number> = {};
  const owner = stringMap(o.metadata?.labels)[ORDINALS_OWNER_LABEL] ?? '';
  let sets = false;
  for (const rule of Array.isArray(o.spec?.overrideRules) ? o.spec.overrideRules : []) {
    const ops = Array.isArray(rule?.overriders?.plaintext) ? rule.overriders.plaintext : [];
    const op = ops.find((p: Raw) => typeof p?.path === 'string' && p.path.startsWith('/spec/ordinals'));
    if (!op) continue;
    sets = true;
    const cluster = names(rule?.targetCluster?.clusterNames)[0];
    if (owner && cluster && op.path === '/spec/ordinals' && Number.isSafeInteger(op.value?.start)) starts[cluster] = op.value.start;
  }
  const selectors = (Array.isArray(o.spec?.resourceSelectors) ? o.spec.resourceSelectors : []).filter((s: Raw) => s?.kind === 'StatefulSet');
  const setsOrdinalsOf = sets ? [...new Set<string>(selectors.map((s: Raw) => (typeof s.name === 'string' && s.name ? s.name : '*')))].slice(0, 64) : [];
  const meta: Raw = o.metadata ?? {};
  return { namespace: str(meta.namespace), name: str(meta.name), resourceVersion: str(meta.resourceVersion), owner, starts, setsOrdinalsOf };
}

const kind = (plural: KindName, wireKind: string, group: string, resource: string, slim: (o: Raw) => unknown): KindSpec =>
  ({ plural, resource, kind: wireKind, wireKind, group, version: group === 'work.karmada.io' ? 'v1alpha2' : 'v1alpha1', required: true, shortNames: [], slim });

/** What a scheduler of Karmada's bindings watches on the Karmada control plane. */
export const KARMADA_KINDS = {
  bindings: kind('resourcebindings', 'ResourceBinding', 'work.karmada.io', 'resourcebindings', slimBinding('ResourceBinding')),
  clusterBindings: kind('clusterresourcebindings', 'ClusterResourceBinding', 'work.karmada.io', 'clusterresourcebindings', slimBinding('ClusterResourceBinding')),
  clusters: kind('memberclusters', 'Cluster', 'cluster.karmada.io', 'clusters', slimMemberCluster),
  policies: kind('propagationpolicies', 'PropagationPolicy', 'policy.karmada.io', 'propagationpolicies', slimPolicy('PropagationPolicy')),
  clusterPolicies: kind('clusterpropagationpolicies', 'ClusterPropagationPolicy', 'policy.karmada.io', 'clusterpropagationpolicies', slimPolicy('ClusterPropagationPolicy')),
  overrides: kind('overridepolicies', 'OverridePolicy', 'policy.karmada.io', 'overridepolicies', slimOrdinalOverride),
} as const;

/** A binding's key: `namespace/name`, or the name of a ClusterResourceBinding. */
export const bindingKey = (b: { namespace: string; name: string }): string => (b.namespace ? `${b.namespace}/${b.name}` : b.name);
