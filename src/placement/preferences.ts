import type { ZonePreferencesSpec } from '../cluster/zonePreferences.js';
import { EQUAL_WEIGHTS, type ZonePreference, type ZonePreferences } from './zoneSequence.js';

/** No annotation: every zone weight 1, which is plain round-robin. */
export const DEFAULT_PREFERENCES: ZonePreferencesSpec = { rebalance: false, zones: { '*': { minReplicas: 0, weight: 1 } } };

const NO_ENTRY: ZonePreference = { minReplicas: 0, maxReplicas: 0, weight: 0 };

/** A zone's entry, else "*", else nothing: a zone nobody named gets no replica. */
export function preferenceFor(spec: ZonePreferencesSpec, zone: string): ZonePreference {
  const p = spec.zones[zone] ?? spec.zones['*'];
  return p ? { minReplicas: p.minReplicas, maxReplicas: p.maxReplicas, weight: p.weight } : NO_ENTRY;
}

export function sequencePreferences(spec: ZonePreferencesSpec | undefined): ZonePreferences {
  return spec ? (zone) => preferenceFor(spec, zone) : EQUAL_WEIGHTS;
}
