import { zoneOf, type SlimNode } from '../cluster/objects.js';
import type { ClusterStore } from '../cluster/store.js';
import { systemClock, type Clock } from '../common/clock.js';

/** A node that could take a pod now, taints aside: Ready and not cordoned. */
const schedulable = (n: SlimNode | undefined) => n !== undefined && n.ready && !n.unschedulable;

/**
 * When each zone last gained or lost its last schedulable node (docs/design.md#repair): per
 * topology key, a count of schedulable nodes per zone kept from node events in O(1) each; a
 * count crossing zero stamps the zone. A zone never seen to change counts from the start, so a
 * restart waits as long as a zone that just came back; other keys are followed from first use.
 */
export function zoneStability(store: ClusterStore, clock: Clock = systemClock, topologyKeys: readonly string[] = []) {
  const started = clock.now();
  const keys = new Map<string, { count: Map<string, number>; changedAt: Map<string, number> }>();

  function tracked(topologyKey: string) {
    let t = keys.get(topologyKey);
    if (!t) {
      t = { count: new Map(), changedAt: new Map() };
      for (const n of store.nodes()) {
        const z = zoneOf(n, topologyKey);
        if (z !== undefined && schedulable(n)) t.count.set(z, (t.count.get(z) ?? 0) + 1);
      }
      keys.set(topologyKey, t);
    }
    return t;
  }

  // Keys known up front are followed from the start: every node the first list brings stamps its zone.
  for (const key of topologyKeys) tracked(key);

  store.onNode((before, after) => {
    for (const [key, t] of keys) {
      // The net change per zone: a heartbeat of a Ready node changes nothing.
      const from = schedulable(before) ? zoneOf(before!, key) : undefined;
      const to = schedulable(after) ? zoneOf(after!, key) : undefined;
      if (from === to) continue;
      for (const [z, by] of [[from, -1], [to, +1]] as const) {
        if (z === undefined) continue;
        const was = t.count.get(z) ?? 0;
        t.count.set(z, was + by);
        if ((was === 0) !== (was + by === 0)) t.changedAt.set(z, clock.now());
      }
    }
  });

  return {
    /** Schedulable nodes (Ready, not cordoned) of the zone now. */
    schedulableNodes: (topologyKey: string, zone: string) => tracked(topologyKey).count.get(zone) ?? 0,
    /** Since when (ms) the zone has had, or lacked, a schedulable node. */
    stableSince: (topologyKey: string, zone: string) => tracked(topologyKey).changedAt.get(zone) ?? started,
  };
}
