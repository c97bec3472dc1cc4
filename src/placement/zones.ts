import { ANNOTATION } from '../cluster/annotations.js';
import { type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { NO_NEEDS, usableZones } from './nodeFit.js';

export type ZoneListSource = 'annotation' | 'pending-freeze' | 'nodes';

export interface ZoneList {
  zones: string[];
  source: ZoneListSource;
  topologyKey: string;
  /** A derived list ordered to keep seats where they already are (adoption.ts): how many agree, of how many placed. */
  adopted?: { agree: number; seats: number };
  /**
   * Zones where some node fits the workload's pod template (node selector, required node
   * affinity, tolerations), whatever the node's state: a derived list holds only these.
   */
  usable: ReadonlySet<string>;
}

/** Zones of the list where no node can take the workload's pods (a listed node group scaled to zero looks so). */
export function unusableZones(list: ZoneList): string[] {
  return list.zones.filter((z) => !list.usable.has(z));
}

export function parseZoneList(value: string): string[] {
  return [...new Set(value.split(',').map((z) => z.trim()).filter(Boolean))];
}

export function topologyKeyOf(workload: SlimWorkload | undefined, defaultKey: string): string {
  const key = workload?.annotations[ANNOTATION.topologyKey]?.trim();
  return key || defaultKey;
}

/**
 * What the debug views show of a list: its zones, the listed ones no node fits (`unusable`), and
 * the cluster's other zones the workload's pods cannot use (`excluded`: node selector, affinity, taints).
 */
export function zonesShown(list: ZoneList, snapshot: Snapshot): { list: string[]; unusable: string[]; excluded: string[] } {
  return {
    list: list.zones, unusable: unusableZones(list),
    excluded: snapshot.zones(list.topologyKey).filter((z) => !list.usable.has(z) && !list.zones.includes(z)),
  };
}

/**
 * The zone list L of a workload: its `zonekeeper.io/zones` annotation, else a list being
 * frozen onto it right now, else the zones its pods can use, sorted.
 */
export function zoneListOf(
  workload: SlimWorkload | undefined, snapshot: Snapshot, defaultKey: string, pendingFreeze?: string[],
): ZoneList {
  const topologyKey = topologyKeyOf(workload, defaultKey);
  const annotated = workload?.annotations[ANNOTATION.zones];
  const zones = annotated === undefined ? [] : parseZoneList(annotated);
  const usable = usableZones(workload?.template ?? NO_NEEDS, snapshot, topologyKey);
  if (zones.length > 0) return { zones, source: 'annotation', topologyKey, usable: usable.set };
  if (pendingFreeze && pendingFreeze.length > 0) return { zones: pendingFreeze, source: 'pending-freeze', topologyKey, usable: usable.set };
  return { zones: [...usable.sorted], source: 'nodes', topologyKey, usable: usable.set };
}

