import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { ZONE_GATE } from '../cluster/annotations.js';
import { objectPath, POD_KIND } from '../cluster/kinds.js';
import { gatePatch, unwritable, type GateDecision } from '../placement/zoneGate.js';

// The one write of the zone gate (docs/design.md#the-zone-gate): read the pod, write the decision
// into its spec and lift the gate in one merge patch carrying the resourceVersion read.

export type LiftResult =
  | { result: 'lifted'; unwritable?: string }
  /** Gone, replaced (another UID), or no longer gated: nothing to do. */
  | { result: 'gone' | 'not-gated' }
  /** Changed since it was read (another writer, a hand-over): decide again from the cache. */
  | { result: 'conflict' };

export class GateWriteError extends Error {}

export async function liftGate(
  api: ApiClient, pod: { namespace: string; name: string; uid: string }, decision: Exclude<GateDecision, { kind: 'wait' }>, timeoutMs = 10_000,
): Promise<LiftResult> {
  const path = objectPath(POD_KIND, pod.namespace, pod.name);
  const got = await api.request('GET', path, { timeoutMs });
  if (got.status === 404) return { result: 'gone' };
  if (got.status !== 200) throw new GateWriteError(`GET ${path}: ${got.status} ${statusMessage(got.body)}`);
  const raw = JSON.parse(got.body);
  if (raw.metadata?.uid !== pod.uid) return { result: 'gone' };
  if (!(raw.spec?.schedulingGates ?? []).some((g: { name?: string }) => g?.name === ZONE_GATE)) return { result: 'not-gated' };
  const body = JSON.stringify(gatePatch(raw, decision));
  const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs });
  if (res.status === 409) return { result: 'conflict' };
  if (res.status === 404) return { result: 'gone' };
  if (res.status !== 200) throw new GateWriteError(`PATCH ${path}: ${res.status} ${statusMessage(res.body)}`);
  return { result: 'lifted', unwritable: unwritable(raw, decision) };
}
