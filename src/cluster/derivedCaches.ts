import { holdsSeat, type SlimNode, type SlimPod } from './objects.js';
import { ZONE_LABEL } from './annotations.js';
import type { NodeUsage } from './snapshot.js';

const NO_USAGE: NodeUsage = { cpuMilli: 0, memory: 0, pods: 0 };
const NO_COUNTS: ReadonlyMap<string, number> = new Map();
/** Values `nodeDerived` keeps: one per distinct pod template's needs, bounded by the cluster. */
const NODE_DERIVED_KEPT = 4096;
/** And the bytes of their keys, which hold a selection's text (a tenant's affinity may be hundreds of KiB). */
export const NODE_DERIVED_KEY_BYTES = 32 * 1024 * 1024;
/** What a kept value costs beside its key (a node fit holds a byte per node slot and its zones). */
const derivedBytes = (key: string) => 2 * key.length + 1024;
/** Zones remembered per label after their last node went away: a bound whatever the churn. */
const REMEMBERED_ZONES = 64;
/** The last nodes version handed out, by any store: a store built anew (a member connected again) reuses none. */
let lastNodesVersion = 0;
/** Labels whose zones are indexed or remembered: a workload's annotation may name any (each at most 256 KiB, the API's annotation limit). */
const TOPOLOGY_KEYS_KEPT = 64;

/** Room for one more label in `byKey`, the oldest going first; the zone label is never dropped. */
function roomForKey(byKey: Map<string, unknown>): void {
  if (byKey.size < TOPOLOGY_KEYS_KEPT) return;
  for (const key of byKey.keys()) {
    if (key === ZONE_LABEL) continue;
    byKey.delete(key);
    return;
  }
}

const CONTROL_PLANE_ROLES = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

/** A control-plane node, by its role label or taint: its zone is no zone that workloads grow into (its nodes are not theirs). */
function controlPlane(n: SlimNode): boolean {
  return CONTROL_PLANE_ROLES.some((role) => role in n.labels || n.taints.some((t) => t.key === role));
}

/** Whether a node's change can change what matches it: its labels or its taints (or it came or went). */
function reshaped(before: SlimNode | undefined, after: SlimNode | undefined): boolean {
  if (!before || !after) return true;
  if (before.taints.length !== after.taints.length) return true;
  for (let i = 0; i < before.taints.length; i++) {
    const a = before.taints[i]!, b = after.taints[i]!;
    if (a.key !== b.key || a.value !== b.value || a.effect !== b.effect) return true;
  }
  const keys = Object.keys(before.labels);
  if (keys.length !== Object.keys(after.labels).length) return true;
  return keys.some((k) => before.labels[k] !== after.labels[k]);
}

/**
 * What is derived from the indexed objects as they come and go, so a decision reads it without
 * a walk: requests per node and seated pods per owner and node (kept per pod change); nodes and
 * zones by label (rebuilt on first use after a node change); zones remembered after their last
 * node went away; `nodeDerived`'s values (dropped when nodes are reshaped).
 */
export class DerivedCaches {
  /** Per owner key, per node: pods bound there holding a seat. */
  private readonly seatedByOwner = new Map<string, Map<string, number>>();
  /** Requests of the pods on each node (zone balance's capacity). */
  private readonly usage = new Map<string, NodeUsage>();
  /** Zones remembered by label after their last (non-control-plane) node went away, for the labels asked about. */
  private readonly remembered = new Map<string, Set<string>>([[ZONE_LABEL, new Set()]]);
  /** Sorted zone values by topology key, from `zoneNodes`. */
  private readonly zoneCache = new Map<string, string[]>();
  /** Nodes by topology key, then zone: built on first use, dropped on any node change. */
  private readonly zoneNodes = new Map<string, Map<string, SlimNode[]>>();
  /** `nodeDerived`'s values, dropped when a node is reshaped. */
  private readonly derived = new Map<string, unknown>();
  private derivedKeyBytes = 0;
  /** New each time `nodeDerived`'s values are dropped: what is kept per node set elsewhere keys on it. */
  private nodeShapes = ++lastNodesVersion;

  /** `nodes`: every cached node, read when a zone index is rebuilt. */
  constructor(private readonly nodes: () => Iterable<SlimNode>) {}

  /** A pod written (sign 1) or gone (-1), under its owner's key: its requests and seat counted. */
  podCounted(pod: SlimPod, owner: string | undefined, sign: 1 | -1): void {
    if (!pod.nodeName) return;
    if (!pod.finished) this.addUsage(pod.nodeName, pod, sign);
    if (owner !== undefined && holdsSeat(pod)) this.countSeated(owner, pod.nodeName, sign);
  }

  /** A node written or removed (`after` undefined): zones rebuilt on next use, derived values dropped if it was reshaped. */
  nodeChanged(before: SlimNode | undefined, after: SlimNode | undefined): void {
    if (before && !after) this.remember(before);
    this.zoneCache.clear();
    this.zoneNodes.clear();
    if (reshaped(before, after)) this.dropNodeDerived();
  }

  /** Something beside the nodes that `nodeDerived` values read changed (NodePools, the autoscaler's coming or going). */
  dropNodeDerived(): void {
    this.nodeShapes = ++lastNodesVersion;
    this.derived.clear();
    this.derivedKeyBytes = 0;
  }

  /** `nodeDerived`'s entries and their bytes as counted against NODE_DERIVED_KEY_BYTES. */
  nodeDerivedHeld(): { entries: number; bytes: number } {
    return { entries: this.derived.size, bytes: this.derivedKeyBytes };
  }

  /** Changes whenever a node comes, goes or has its labels or taints changed (as `nodeDerived`'s values are dropped). */
  nodesVersion(): number { return this.nodeShapes; }

  nodeDerived<T>(key: string, compute: () => T): T {
    if (this.derived.has(key)) return this.derived.get(key) as T;
    const value = compute();
    const bytes = derivedBytes(key);
    if (bytes > NODE_DERIVED_KEY_BYTES) return value;
    // The oldest go first (a Map iterates in insertion order).
    while (this.derived.size >= NODE_DERIVED_KEPT || this.derivedKeyBytes + bytes > NODE_DERIVED_KEY_BYTES) {
      const oldest: string = this.derived.keys().next().value!;
      this.derived.delete(oldest);
      this.derivedKeyBytes -= derivedBytes(oldest);
    }
    this.derived.set(key, value);
    this.derivedKeyBytes += bytes;
    return value;
  }

  zones(topologyKey: string): string[] {
    let zones = this.zoneCache.get(topologyKey);
    if (!zones) {
      zones = [...this.zoneIndex(topologyKey).keys()].filter(Boolean).sort();
      roomForKey(this.zoneCache);
      this.zoneCache.set(topologyKey, zones);
    }
    return zones;
  }

  clusterZones(topologyKey: string): string[] {
    return this.nodeDerived(`clusterZones\u0002${topologyKey}`, () => {
      let remembered = this.remembered.get(topologyKey);
      if (!remembered) {
        roomForKey(this.remembered);
        this.remembered.set(topologyKey, (remembered = new Set()));
      }
      const zones = new Set(remembered);
      for (const [z, nodes] of this.zoneIndex(topologyKey)) if (z && nodes.some((n) => !controlPlane(n))) zones.add(z);
      return [...zones].sort();
    });
  }

  nodesInZone(topologyKey: string, zone: string): readonly SlimNode[] {
    return this.zoneIndex(topologyKey).get(zone) ?? [];
  }

  nodeUsage(node: string): NodeUsage { return this.usage.get(node) ?? NO_USAGE; }

  seatedPodsPerNode(owner: string): ReadonlyMap<string, number> { return this.seatedByOwner.get(owner) ?? NO_COUNTS; }

  /** A node going away leaves its zones remembered, on the labels asked about so far. */
  private remember(node: SlimNode): void {
    if (controlPlane(node)) return;
    for (const [key, zones] of this.remembered) {
      const z = node.labels[key];
      if (!z || zones.has(z)) continue;
      if (zones.size >= REMEMBERED_ZONES) zones.delete(zones.values().next().value!);
      zones.add(z);
    }
  }

  /** Nodes by zone value of one label: built on first use, dropped on any node change. */
  private zoneIndex(topologyKey: string): Map<string, SlimNode[]> {
    let byZone = this.zoneNodes.get(topologyKey);
    if (!byZone) {
      byZone = new Map();
      for (const n of this.nodes()) {
        const z = n.labels[topologyKey];
        if (z !== undefined) (byZone.get(z) ?? byZone.set(z, []).get(z)!).push(n);
      }
      roomForKey(this.zoneNodes);
      this.zoneNodes.set(topologyKey, byZone);
    }
    return byZone;
  }

  private addUsage(node: string, pod: SlimPod, sign: 1 | -1): void {
    const u = this.usage.get(node) ?? { cpuMilli: 0, memory: 0, pods: 0 };
    u.cpuMilli += sign * pod.cpuMilli;
    u.memory += sign * pod.memory;
    u.pods += sign;
    if (u.pods === 0) this.usage.delete(node);
    else this.usage.set(node, u);
  }

  private countSeated(owner: string, node: string, sign: 1 | -1): void {
    let counts = this.seatedByOwner.get(owner);
    if (!counts) this.seatedByOwner.set(owner, (counts = new Map()));
    const n = (counts.get(node) ?? 0) + sign;
    if (n > 0) counts.set(node, n);
    else counts.delete(node);
    if (counts.size === 0) this.seatedByOwner.delete(owner);
  }
}
