import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { ZONE_GATE } from '../cluster/annotations.js';
import { objectPath, POD_KIND } from '../cluster/kinds.js';
import type { SlimPod } from '../cluster/objects.js';
import { gateWrite } from '../decision/gatedSubsetPatch.js';
import { unwritable, type SpecDecision } from '../decision/spec.js';

// The one write of the zone gate (docs/design.md#the-zone-gate): the decision written into the
// pod's spec and the gate lifted in one merge patch carrying the resourceVersion it was made from.

export type LiftResult =
  /** `patchNotApplied`: the fields of a subset's `patch` the stored pod could not take. */
  | { result: 'lifted'; unwritable?: string; patchNotApplied?: string }
  /** Gone, replaced (another UID), or no longer gated: nothing to do. */
  | { result: 'gone' | 'not-gated' }
  /** Changed since it was read (another writer, a hand-over): decide again from the cache. */
  | { result: 'conflict' };

class GateWriteError extends Error {}

/**
 * Writes the decision: from the cached pod when it is a zone or nothing (the cache holds what
 * that patch needs: the resourceVersion, the other gates, the nodeSelector), else from a GET.
 */
export async function liftGate(
  api: ApiClient, pod: Pick<SlimPod, 'namespace' | 'name' | 'uid'> & Partial<Pick<SlimPod, 'gate' | 'selection'>>,
  decision: Exclude<SpecDecision, { kind: 'wait' }>, timeoutMs = 10_000,
): Promise<LiftResult> {
  const path = objectPath(POD_KIND, pod.namespace, pod.name);
  if (pod.gate?.resourceVersion && decision.kind !== 'subset') {
    const cached = {
      metadata: { uid: pod.uid, resourceVersion: pod.gate.resourceVersion },
      spec: { schedulingGates: [...pod.gate.otherGates.map((name) => ({ name })), { name: ZONE_GATE }], nodeSelector: pod.selection?.nodeSelector },
    };
    const r = await write(api, path, cached, decision, timeoutMs);
    // The scheduler marks a new gated pod's status at once: the cache may be a version behind.
    if (r.result !== 'conflict') return r;
  }
  const got = await api.request('GET', path, { timeoutMs });
  if (got.status === 404) return { result: 'gone' };
  if (got.status !== 200) throw new GateWriteError(`GET ${path}: ${got.status} ${statusMessage(got.body)}`);
  const raw = JSON.parse(got.body);
  if (raw.metadata?.uid !== pod.uid) return { result: 'gone' };
  if (!(raw.spec?.schedulingGates ?? []).some((g: { name?: string }) => g?.name === ZONE_GATE)) return { result: 'not-gated' };
  return write(api, path, raw, decision, timeoutMs);
}

/** One PATCH of `decision` into `raw` (as read), conditional on its resourceVersion. */
async function write(api: ApiClient, path: string, raw: any, decision: Exclude<SpecDecision, { kind: 'wait' }>, timeoutMs: number): Promise<LiftResult> {
  const { patch, patchNotApplied } = gateWrite(raw, decision);
  const body = JSON.stringify(patch);
  const res = await api.request('PATCH', path, { body, contentType: 'application/merge-patch+json', timeoutMs });
  if (res.status === 409) return { result: 'conflict' };
  if (res.status === 404) return { result: 'gone' };
  if (res.status !== 200) throw new GateWriteError(`PATCH ${path}: ${res.status} ${statusMessage(res.body)}`);
  return { result: 'lifted', unwritable: unwritable(raw, decision), ...(patchNotApplied ? { patchNotApplied } : {}) };
}
