/** Per-zone preferences, the Federated ReplicaSet form (DESIGN §4). */
export interface ZonePreference {
  minReplicas: number;
  maxReplicas: number | undefined;
  weight: number;
}

export type ZonePreferences = (zone: string) => ZonePreference;

export const EQUAL_WEIGHTS: ZonePreferences = () => ({ minReplicas: 0, maxReplicas: undefined, weight: 1 });

/**
 * The zone of every seat, built one seat at a time so that every prefix is the best
 * layout for that many replicas: first zones below minReplicas, then the zone with the
 * largest weight / (2·count + 1) among zones under maxReplicas (Sainte-Laguë); ties go
 * to the earlier zone of the list. Equal weights give a,b,c,a,b,c.
 * Shorter than `length` when every zone is at its maximum.
 */
export function zoneSequence(zones: readonly string[], length: number, prefs: ZonePreferences = EQUAL_WEIGHTS): string[] {
  const p = zones.map(prefs);
  const counts = zones.map(() => 0);
  const seq: string[] = [];
  while (seq.length < length) {
    let pick = counts.findIndex((c, i) => c < p[i]!.minReplicas && c < (p[i]!.maxReplicas ?? Infinity));
    if (pick < 0) {
      let best = -1;
      counts.forEach((c, i) => {
        const pref = p[i]!;
        if (pref.weight <= 0 || c >= (pref.maxReplicas ?? Infinity)) return;
        const priority = pref.weight / (2 * c + 1);
        if (priority > best) { best = priority; pick = i; }
      });
    }
    if (pick < 0) break;
    counts[pick]!++;
    seq.push(zones[pick]!);
  }
  return seq;
}
