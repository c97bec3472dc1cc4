import { ANNOTATION } from '../cluster/annotations.js';
import { type SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { NO_NEEDS } from './nodeFit.js';
import { zoneReach, type GrowthSettings, type ZoneReach } from './zoneReach.js';

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
  /** Which zones the workload's pods can use now, can grow into, or never (zoneReach.ts). */
  reach: ZoneReach;
}

/** Zones of the list the workload's pods can neither use nor grow into: their seats wait on nothing that will come. */
export function unusableZones(list: ZoneList): string[] {
  return list.zones.filter((z) => list.reach.of(z) === 'never');
}

/** Zones of the list with no node for the workload's pods yet, that an autoscaler can add one in. */
function growingZones(list: ZoneList): string[] {
  return list.zones.filter((z) => list.reach.of(z) === 'grow');
}

/**
 * Zones a list frozen by zonekeeper leaves out that the workload's pods could use or grow into:
 * frozen before zonekeeper knew them (a node group at zero), reported by health, never rewritten.
 */
export function leftOutZones(list: ZoneList, frozenByZonekeeper: boolean): string[] {
  if (list.source !== 'annotation' || !frozenByZonekeeper) return [];
  const listed = new Set(list.zones);
  return list.reach.sorted.filter((z) => !listed.has(z));
}

export function parseZoneList(value: string): string[] {
  return [...new Set(value.split(',').map((z) => z.trim()).filter(Boolean))];
}

function topologyKeyOf(workload: SlimWorkload | undefined, defaultKey: string): string {
  const key = workload?.annotations[ANNOTATION.topologyKey]?.trim();
  return key || defaultKey;
}

/**
 * What the debug views show of a list: its zones, the listed ones no node fits (`unusable`), and
 * the cluster's other zones the workload's pods cannot use (`excluded`: node selector, affinity, taints).
 */
export function zonesShown(list: ZoneList, snapshot: Snapshot): { list: string[]; unusable: string[]; growing: string[]; excluded: string[] } {
  return {
    list: list.zones, unusable: unusableZones(list), growing: growingZones(list),
    excluded: snapshot.zones(list.topologyKey).filter((z) => list.reach.of(z) === 'never' && !list.zones.includes(z)),
  };
}

/**
 * The zone list L of a workload: its `zonekeeper.io/zones` annotation, else a list being
 * frozen onto it right now, else the zones its pods can use or grow into, sorted.
 */
export function zoneListOf(
  workload: SlimWorkload | undefined, snapshot: Snapshot, settings: GrowthSettings, pendingFreeze?: string[],
): ZoneList {
  const topologyKey = topologyKeyOf(workload, settings.topologyKey);
  const annotated = workload?.annotations[ANNOTATION.zones];
  const zones = annotated === undefined ? [] : parseZoneList(annotated);
  const reach = zoneReach(workload?.template ?? NO_NEEDS, snapshot, { ...settings, topologyKey });
  const base = { topologyKey, usable: reach.now, reach };
  if (zones.length > 0) return { ...base, zones, source: 'annotation' };
  if (pendingFreeze && pendingFreeze.length > 0) return { ...base, zones: pendingFreeze, source: 'pending-freeze' };
  return { ...base, zones: [...reach.sorted], source: 'nodes' };
}
