import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import type { TemplateRef } from '../actuator/events.js';
import { KARMADA_ANNOTATION, ORDINALS_OWNER_LABEL, ordinalsPolicyName, type SlimBinding, type TargetCluster } from '../cluster/karmada.js';
import type { ScheduledCondition } from '../decision/bindingDecisions.js';

// What karmada-scheduler writes (Karmada v1.19, pkg/scheduler/scheduler.go), written the same way: a merge
// patch of spec.clusters and the applied-placement annotation, then the status (Scheduled, the observed
// generation, lastScheduledTime). Each carries the resourceVersion its plan was made from (409: never written).

/** `stale`: the binding moved past what the write was made for (a 409, or a JSON patch's failed test: a 422). */
export type WriteResult = { ok: true; resourceVersion: string; generation: number } | { ok: false; status: number; message: string; stale: boolean };

const MERGE = 'application/merge-patch+json';
// Every JSON patch here opens with a test of what the write was made for.
const JSON_PATCH = 'application/json-patch+json';

function bindingPath(b: SlimBinding, sub = ''): string {
  const base = b.namespace
    ? `/apis/work.karmada.io/v1alpha2/namespaces/${encodeURIComponent(b.namespace)}/resourcebindings/${encodeURIComponent(b.name)}`
    : `/apis/work.karmada.io/v1alpha2/clusterresourcebindings/${encodeURIComponent(b.name)}`;
  return base + sub;
}

async function patch(api: ApiClient, path: string, body: object, contentType = MERGE): Promise<WriteResult> {
  const res = await api.request('PATCH', path, { body: JSON.stringify(body), contentType, timeoutMs: 10_000 });
  if (res.status !== 200) {
    const stale = res.status === 409 || (contentType === JSON_PATCH && res.status === 422);
    return { ok: false, status: res.status, message: statusMessage(res.body), stale };
  }
  const meta = (JSON.parse(res.body) as { metadata?: { resourceVersion?: string; generation?: number } }).metadata ?? {};
  return { ok: true, resourceVersion: meta.resourceVersion ?? '', generation: meta.generation ?? 0 };
}

/** spec.clusters (null: emptied, as Karmada does when nothing fits) and the placement it was planned for, if the binding is still the one read. */
export function writeClusters(api: ApiClient, b: SlimBinding, clusters: readonly TargetCluster[] | null): Promise<WriteResult> {
  return patch(api, bindingPath(b), {
    metadata: { resourceVersion: b.resourceVersion, annotations: { [KARMADA_ANNOTATION.appliedPlacement]: b.placementText } },
    spec: { clusters },
  });
}

/** The resource template a binding propagates: karmada-scheduler records its events there too. */
export const templateRef = (b: SlimBinding): TemplateRef => ({ karmadaTemplate: true, ...b.resource });

/**
 * The status as karmada-scheduler patches it: only what changed (undefined: nothing). The conditions go only when
 * Scheduled itself changes, so a FullyApplied that Karmada's status controller wrote is never sent back; on success,
 * the generation observed and the time; the clusterAffinities term observed, when it changed.
 */
export function scheduledStatus(
  b: SlimBinding, generation: number, c: ScheduledCondition, affinityName: string | undefined, now: number,
): Record<string, unknown> | undefined {
  const stamp = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const prior = b.conditions.find((x) => x.type === 'Scheduled');
  const status: Record<string, unknown> = {};
  if (!prior || prior.status !== c.status || prior.reason !== c.reason || prior.message !== c.message) {
    const changed = !prior || prior.status !== c.status;
    const scheduled = { type: 'Scheduled', status: c.status, reason: c.reason, message: c.message,
      lastTransitionTime: changed ? stamp : prior.lastTransitionTime ?? stamp };
    status.conditions = [...b.conditions.filter((x) => x.type !== 'Scheduled'), scheduled];
  }
  if (c.status === 'True') Object.assign(status, { schedulerObservedGeneration: generation, lastScheduledTime: stamp });
  if (affinityName !== undefined) status.schedulerObservingAffinityName = affinityName;
  return Object.keys(status).length ? status : undefined;
}

/**
 * The status for the spec at `at`. With the conditions (a list, replaced whole) or `byVersion`: only if the binding is
 * still at that resourceVersion. Otherwise a JSON patch of its own fields that only applies while the spec is still that
 * generation, so the status Karmada's controllers write meanwhile (aggregatedStatus, FullyApplied, one of them right
 * after each spec patch) does not turn it away; a failed test is a 422.
 */
export function writeScheduled(
  api: ApiClient, b: SlimBinding, at: { resourceVersion: string; generation: number }, status: Record<string, unknown>, byVersion = false,
): Promise<WriteResult> {
  if (byVersion || status.conditions !== undefined) return patch(api, bindingPath(b, '/status'), { metadata: { resourceVersion: at.resourceVersion }, status });
  const ops = [{ op: 'test', path: '/metadata/generation', value: at.generation },
    ...Object.entries(status).map(([k, value]) => ({ op: 'add', path: `/status/${k}`, value }))];
  return patch(api, bindingPath(b, '/status'), ops, JSON_PATCH);
}

/**
 * The OverridePolicy that gives each member its range of a StatefulSet's ordinals
 * (`spec.ordinals.start`): created, or replaced whole if it is still the one read.
 */
export async function writeOrdinals(
  api: ApiClient, b: SlimBinding, starts: Readonly<Record<string, number>>, resourceVersion: string | undefined,
): Promise<WriteResult> {
  const { namespace, name } = b.resource;
  const spec = {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace, name }],
    overrideRules: Object.entries(starts).sort(([a], [c]) => (a < c ? -1 : 1)).map(([cluster, start]) => ({
      targetCluster: { clusterNames: [cluster] },
      overriders: { plaintext: [{ path: '/spec/ordinals', operator: 'add', value: { start } }] },
    })),
  };
  const collection = `/apis/policy.karmada.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/overridepolicies`;
  if (resourceVersion !== undefined) return patch(api, `${collection}/${encodeURIComponent(ordinalsPolicyName(name))}`, { metadata: { resourceVersion }, spec });
  const body = { apiVersion: 'policy.karmada.io/v1alpha1', kind: 'OverridePolicy',
    metadata: { name: ordinalsPolicyName(name), namespace, labels: { [ORDINALS_OWNER_LABEL]: name, 'app.kubernetes.io/managed-by': 'zonekeeper' } }, spec };
  const res = await api.request('POST', collection, { body: JSON.stringify(body), contentType: 'application/json', timeoutMs: 10_000 });
  if (res.status !== 201) return { ok: false, status: res.status, message: statusMessage(res.body), stale: res.status === 409 };
  return { ok: true, resourceVersion: '', generation: 0 };
}
