import { z } from 'zod';
import { describeIssues } from '../common/errors.js';

// `zonekeeper.io/zone-preferences`, parsed once when the workload arrives in the cache: the
// Federated ReplicaSet preferences, zones for clusters (docs/design.md#zone-list-zone-sequence-fleet-balance).

const count = z.number().int().min(0);

const zonePreferencesSchema = z.strictObject({
  rebalance: z.boolean().default(false),
  zones: z.record(z.string().min(1), z.strictObject({
    minReplicas: count.default(0),
    maxReplicas: count.optional(),
    weight: count.default(0),
  })),
});

export type ZonePreferencesSpec = z.infer<typeof zonePreferencesSchema>;

export type ParsedPreferences =
  | { ok: true; spec: ZonePreferencesSpec }
  | { ok: false; error: string };

export function parsePreferences(json: string): ParsedPreferences {
  return parseJsonAnnotation(zonePreferencesSchema, json);
}

/** What is said of a wrong annotation at most (a value of 10,000 unknown keys would be named key by key). */
const ERROR_MAX = 1024;
const clipped = (error: string) => (error.length > ERROR_MAX ? `${error.slice(0, ERROR_MAX)}…` : error);

/** An annotation's JSON against its schema: the value, or one line saying what is wrong. */
export function parseJsonAnnotation<T>(schema: z.ZodType<T>, json: string): { ok: true; spec: T } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { ok: false, error: clipped(`not JSON: ${(err as Error).message}`) };
  }
  const r = schema.safeParse(value);
  return r.success ? { ok: true, spec: r.data } : { ok: false, error: clipped(describeIssues(r.error)) };
}
