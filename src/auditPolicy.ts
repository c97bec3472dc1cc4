import { statusMessage, type ApiClient } from './cluster/apiClient.js';
import { servesMutatingPolicies } from './policy/tableWriter.js';

// What `zonekeeper audit` says of the policy transport (docs/design.md#the-policy), on any cluster,
// zonekeeper installed or not: whether the API server serves MutatingAdmissionPolicies (1.36+),
// and the seat tables found, each with the StatefulSets it covers. One bounded request each.

/** Seat tables listed at most: the first page of one request. */
const TABLES_LISTED = 100;

export interface AuditPolicy {
  /** Whether kube-apiserver serves admissionregistration.k8s.io/v1 mutatingadmissionpolicies; undefined: could not tell. */
  apiServed: boolean | undefined;
  /** The seat table ConfigMaps by namespace, with the StatefulSets each covers (its keys that are a UID alone). */
  seatTables: { namespace: string; statefulSets: number }[];
  /** More tables than were listed. */
  more: boolean;
  /** Why the tables could not be listed (say, the audit may not list ConfigMaps). */
  error?: string;
}

export async function auditPolicy(api: ApiClient, configMapName: string, namespace?: string): Promise<AuditPolicy> {
  const apiServed = await servesMutatingPolicies(api);
  const where = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps` : '/api/v1/configmaps';
  const query = `fieldSelector=${encodeURIComponent(`metadata.name=${configMapName}`)}&limit=${TABLES_LISTED}`;
  const res = await api.request('GET', `${where}?${query}`, { timeoutMs: 10_000 }).catch((err: Error) => ({ status: 0, body: err.message }));
  if (res.status !== 200) {
    return { apiServed, seatTables: [], more: false, error: `ConfigMaps ${configMapName} not listed: ${res.status || 'no answer'} ${statusMessage(res.body)}`.trim() };
  }
  let list: { metadata?: { continue?: string }; items?: { metadata?: { namespace?: string }; data?: Record<string, string> }[] };
  try {
    list = JSON.parse(res.body);
  } catch {
    return { apiServed, seatTables: [], more: false, error: `ConfigMaps ${configMapName}: the answer is not JSON` };
  }
  const seatTables = (list.items ?? []).slice(0, TABLES_LISTED).map((cm) => ({
    namespace: cm.metadata?.namespace ?? '',
    statefulSets: Object.keys(cm.data ?? {}).filter((k) => !k.includes('.')).length,
  })).sort((a, b) => a.namespace.localeCompare(b.namespace));
  return { apiServed, seatTables, more: !!list.metadata?.continue };
}

/** The audit's lines about the policy, under its table. */
export function auditPolicyText(p: AuditPolicy, configMapName: string): string {
  const served = p.apiServed === undefined ? 'unknown' : p.apiServed ? 'yes' : 'no (before Kubernetes 1.36: admission and the gate decide every pod)';
  const tables = p.error ?? (p.seatTables.length === 0 ? 'none'
    : p.seatTables.map((t) => `${t.namespace} (${t.statefulSets} StatefulSet${t.statefulSets === 1 ? '' : 's'})`).join(', ') + (p.more ? ', and more' : ''));
  return `MutatingAdmissionPolicy API served: ${served}\nSeat tables (ConfigMap ${configMapName}; StatefulSets of apps/v1 and apps.kruise.io): ${tables}`;
}
