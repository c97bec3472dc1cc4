import { z } from 'zod';
import { badRequestOf } from '../../common/errors.js';
import type { PodPick } from '../../placement/downscale.js';

// KEP-3189's downscale pod picker on the wire: snake_case, as its callers send and read it.

const pickRequest = z.looseObject({
  number_of_pods_requested: z.number().int().positive(),
  candidate_pods: z.array(z.string().min(1).max(253)),
});

export type PickRequest = z.infer<typeof pickRequest>;

export function parsePickRequest(body: unknown): PickRequest {
  const r = pickRequest.safeParse(body);
  if (!r.success) throw badRequestOf(r.error);
  return r.data;
}

/** The answer: `warnings` only when there are some. */
export interface PickResult {
  chosen_pods: string[];
  tied_pods: string[];
  warnings?: string[];
}

export function pickResult(pick: PodPick): PickResult {
  return { chosen_pods: pick.chosen, tied_pods: pick.tied, ...(pick.warnings.length > 0 ? { warnings: pick.warnings } : {}) };
}
