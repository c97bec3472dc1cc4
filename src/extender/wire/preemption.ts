import { z } from 'zod';
import { badRequestOf, BadRequest } from '../../common/errors.js';
import { parseJson } from '../../http/requestBody.js';
import { checkNodeNamesList } from './args.js';
import { deeperThan, LIMITS, validatePod, type RawObject } from './validation.js';

// k8s.io/kube-scheduler/extender/v1 ExtenderPreemptionArgs and ExtenderPreemptionResult: the
// candidate nodes of a preemption and their victims; the answer keeps the nodes allowed.

const metaVictims = z.looseObject({
  Pods: z.array(z.looseObject({ UID: z.string() })).nullish(),
  NumPDBViolations: z.number().int().nullish(),
});
const victims = z.looseObject({
  Pods: z.array(z.looseObject({ metadata: z.looseObject({ uid: z.string().optional() }) })).nullish(),
  NumPDBViolations: z.number().int().nullish(),
});

const preemptionArgs = z.looseObject({
  Pod: z.looseObject({ metadata: z.looseObject({ name: z.string().min(1), uid: z.string().min(1) }) }),
  NodeNameToVictims: z.record(z.string(), victims.nullable()).nullish(),
  NodeNameToMetaVictims: z.record(z.string(), metaVictims.nullable()).nullish(),
});

export interface MetaVictims { Pods: { UID: string }[]; NumPDBViolations: number }

export interface PreemptionArgs {
  Pod: RawObject;
  /** Every candidate node and its victims, as UIDs (what the answer carries either way). */
  candidates: Map<string, MetaVictims>;
}

/** The request, bounded like a filter's: at most `maxNodes` candidates. */
export function parsePreemptionArgs(text: string, maxNodes: number): PreemptionArgs {
  const body = parseJson(text, 'ExtenderPreemptionArgs') as RawObject | null;
  for (const field of ['NodeNameToVictims', 'NodeNameToMetaVictims'] as const) {
    const m = body?.[field];
    if (m && typeof m === 'object' && Object.keys(m).length > maxNodes) {
      throw new BadRequest(field, `${Object.keys(m).length} nodes sent, more than the ${maxNodes} a request may carry for this cluster`);
    }
  }
  const r = preemptionArgs.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  const args = body as RawObject;
  validatePod(args.Pod);
  if (deeperThan(args.Pod, LIMITS.depth)) throw new BadRequest('Pod', `nested deeper than ${LIMITS.depth} levels`);
  checkNodeNamesList([...Object.keys(r.data.NodeNameToMetaVictims ?? {}), ...Object.keys(r.data.NodeNameToVictims ?? {})]);
  const candidates = new Map<string, MetaVictims>();
  // With nodeCacheCapable the scheduler sends UIDs only; otherwise whole pods, answered as UIDs.
  for (const [node, v] of Object.entries(r.data.NodeNameToMetaVictims ?? {})) {
    candidates.set(node, { Pods: (v?.Pods ?? []).map((p) => ({ UID: p.UID })), NumPDBViolations: v?.NumPDBViolations ?? 0 });
  }
  for (const [node, v] of Object.entries(r.data.NodeNameToVictims ?? {})) {
    if (!candidates.has(node)) candidates.set(node, { Pods: (v?.Pods ?? []).map((p) => ({ UID: p.metadata.uid ?? '' })), NumPDBViolations: v?.NumPDBViolations ?? 0 });
  }
  return { Pod: args.Pod, candidates };
}

/** ExtenderPreemptionResult: the candidates kept, victims as sent. */
export function encodePreemptionResult(kept: Map<string, MetaVictims>): string {
  return JSON.stringify({ NodeNameToMetaVictims: Object.fromEntries(kept) });
}
