import { ANNOTATION } from '../cluster/annotations.js';
import { type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';

export type ZoneListSource = 'annotation' | 'pending-freeze' | 'nodes';

export interface ZoneList {
  zones: string[];
  source: ZoneListSource;
  topologyKey: string;
  /** A derived list ordered to keep seats where they already are (adoption.ts): how many agree, of how many placed. */
  adopted?: { agree: number; seats: number };
}

export function parseZoneList(value: string): string[] {
  return [...new Set(value.split(',').map((z) => z.trim()).filter(Boolean))];
}

export function topologyKeyOf(workload: SlimWorkload | undefined, defaultKey: string): string {
  const key = workload?.annotations[ANNOTATION.topologyKey]?.trim();
  return key || defaultKey;
}

/**
 * The zone list L of a workload: its `zonekeeper.io/zones` annotation, else a list being
 * frozen onto it right now, else the distinct zone values of all nodes, sorted.
 */
export function zoneListOf(
  workload: SlimWorkload | undefined, snapshot: Snapshot, defaultKey: string, pendingFreeze?: string[],
): ZoneList {
  const topologyKey = topologyKeyOf(workload, defaultKey);
  const annotated = workload?.annotations[ANNOTATION.zones];
  const zones = annotated === undefined ? [] : parseZoneList(annotated);
  if (zones.length > 0) return { zones, source: 'annotation', topologyKey };
  if (pendingFreeze && pendingFreeze.length > 0) return { zones: pendingFreeze, source: 'pending-freeze', topologyKey };
  return { zones: snapshot.zones(topologyKey), source: 'nodes', topologyKey };
}

