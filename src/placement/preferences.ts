import { z } from 'zod';
import { ANNOTATION, type SlimWorkload } from '../cluster/objects.js';
import { describeIssues } from '../config.js';
import { EQUAL_WEIGHTS, type ZonePreference, type ZonePreferences } from './zoneSequence.js';

const count = z.number().int().min(0);

/** `zonekeeper.io/zone-preferences`: the Federated ReplicaSet preferences, zones for clusters. */
export const zonePreferencesSchema = z.strictObject({
  rebalance: z.boolean().default(false),
  zones: z.record(z.string().min(1), z.strictObject({
    minReplicas: count.default(0),
    maxReplicas: count.optional(),
    weight: count.default(0),
  })),
});

export type ZonePreferencesSpec = z.infer<typeof zonePreferencesSchema>;

/** No annotation: every zone weight 1, which is plain round-robin. */
export const DEFAULT_PREFERENCES: ZonePreferencesSpec = { rebalance: false, zones: { '*': { minReplicas: 0, weight: 1 } } };

export type ParsedPreferences =
  | { ok: true; spec: ZonePreferencesSpec }
  | { ok: false; error: string };

export function parsePreferences(json: string): ParsedPreferences {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` };
  }
  const r = zonePreferencesSchema.safeParse(value);
  return r.success ? { ok: true, spec: r.data } : { ok: false, error: describeIssues(r.error) };
}

const NO_ENTRY: ZonePreference = { minReplicas: 0, maxReplicas: 0, weight: 0 };

/** A zone's entry, else "*", else nothing: a zone nobody named gets no replica. */
export function preferenceFor(spec: ZonePreferencesSpec, zone: string): ZonePreference {
  const p = spec.zones[zone] ?? spec.zones['*'];
  return p ? { minReplicas: p.minReplicas, maxReplicas: p.maxReplicas, weight: p.weight } : NO_ENTRY;
}

const memo = new Map<string, ParsedPreferences>();

/** The workload's preferences, parsed once per distinct annotation value. */
export function preferencesOf(workload: SlimWorkload | undefined): ParsedPreferences | undefined {
  const value = workload?.annotations[ANNOTATION.zonePreferences];
  if (value === undefined) return undefined;
  let parsed = memo.get(value);
  if (!parsed) {
    if (memo.size > 1000) memo.clear();
    memo.set(value, (parsed = parsePreferences(value)));
  }
  return parsed;
}

export function sequencePreferences(spec: ZonePreferencesSpec | undefined): ZonePreferences {
  return spec ? (zone) => preferenceFor(spec, zone) : EQUAL_WEIGHTS;
}
