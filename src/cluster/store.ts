import { holdsSeat, type SlimNode, type SlimNodePool, type SlimPod, type SlimPV, type SlimPVC, type SlimScaleReport, type SlimStorageClass, type SlimWorkload, type SlimWorkloadSpread } from './objects.js';
import { type WorkloadKind } from './kinds.js';
import { isDnsSubdomain } from './names.js';
import { ZONE_LABEL } from './annotations.js';
import { NodeSlots } from './nodeSlots.js';
import type { NodeUsage, PodListener, Snapshot } from './snapshot.js';
import { isWorkloadKindName, WORKLOAD_KINDS, type KindName } from './kinds.js';

export type { KindName } from './kinds.js';

export type { NodeUsage, PodListener, Snapshot } from './snapshot.js';

const nsKey = (namespace: string, name: string) => `${namespace}/${name}`;
const ownerKey = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;
const NONE: readonly SlimPod[] = [];
const NO_USAGE: NodeUsage = { cpuMilli: 0, memory: 0, pods: 0 };
const NO_COUNTS: ReadonlyMap<string, number> = new Map();
/** Values `nodeDerived` keeps: one per distinct pod template's needs, bounded by the cluster. */
const NODE_DERIVED_KEPT = 4096;
/** Zones remembered per label after their last node went away: a bound whatever the churn. */
const REMEMBERED_ZONES = 64;
const NO_REPORTS: readonly SlimScaleReport[] = [];

/** A control-plane node's zone is no zone that workloads grow into (its nodes are not theirs). */
function controlPlane(n: SlimNode): boolean {
  return 'node-role.kubernetes.io/control-plane' in n.labels || 'node-role.kubernetes.io/master' in n.labels;
}

/** Kinds kept by key with no index of their own. */
type PlainKind = 'persistentvolumeclaims' | 'storageclasses' | 'workloadspreads' | 'nodepools' | 'scaleupreports' | 'karpenterreports';
const PLAIN_KINDS: ReadonlySet<KindName> = new Set<PlainKind>(['persistentvolumeclaims', 'storageclasses', 'workloadspreads', 'nodepools', 'scaleupreports', 'karpenterreports']);
const CLUSTER_SCOPED: ReadonlySet<KindName> = new Set<KindName>(['nodes', 'persistentvolumes', 'storageclasses', 'nodepools']);
const REPORT_KINDS: ReadonlySet<KindName> = new Set<KindName>(['scaleupreports', 'karpenterreports']);

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

/** Index maintenance: a bucket of values per index key, dropped when empty. */
function addTo<V>(index: Map<string, Map<string, V>>, key: string, id: string, value: V): void {
  let bucket = index.get(key);
  if (!bucket) index.set(key, (bucket = new Map()));
  bucket.set(id, value);
}

function removeFrom<V>(index: Map<string, Map<string, V>>, key: string, id: string): void {
  const bucket = index.get(key);
  bucket?.delete(id);
  if (bucket && bucket.size === 0) index.delete(key);
}

/**
 * Slim objects by kind, with the indexes the policies need beside them: pods by
 * controller owner and by UID, PVs by claim, node names by zone label value.
 */
export class ClusterStore implements Snapshot {
  private readonly nodeSlots = new NodeSlots();
  private readonly podsByKey = new Map<string, SlimPod>();
  private readonly podsByUid = new Map<string, SlimPod>();
  private readonly podsByOwner = new Map<string, Map<string, SlimPod>>();
  private readonly seatedByOwner = new Map<string, Map<string, number>>();
  private readonly podsByNode = new Map<string, Map<string, SlimPod>>();
  private readonly pvs = new Map<string, SlimPV>();
  private readonly pvByClaim = new Map<string, string>();
  private readonly workloads = new Map<string, SlimWorkload>();
  private readonly workloadsByOwner = new Map<string, Map<string, SlimWorkload>>();
  /** The kinds kept by key alone. */
  private readonly plain = new Map<PlainKind, Map<string, unknown>>([...PLAIN_KINDS].map((k) => [k as PlainKind, new Map()]));
  private readonly pvcs = this.plain.get('persistentvolumeclaims') as Map<string, SlimPVC>;
  private readonly classes = this.plain.get('storageclasses') as Map<string, SlimStorageClass>;
  private readonly spreads = this.plain.get('workloadspreads') as Map<string, SlimWorkloadSpread>;
  private readonly pools = this.plain.get('nodepools') as Map<string, SlimNodePool>;
  /** Autoscaler reports by the pod they are about, then by their store key. */
  private readonly reportsByPod = new Map<string, Map<string, SlimScaleReport>>();
  /** Zones remembered by label after their last (non-control-plane) node went away, for the labels asked about. */
  private readonly remembered = new Map<string, Set<string>>([[ZONE_LABEL, new Set()]]);
  /** Sorted zone values by topology key, from `zoneNodes`. */
  private readonly zoneCache = new Map<string, string[]>();
  /** Nodes by topology key, then zone: built on first use, dropped on any node change. */
  private readonly zoneNodes = new Map<string, Map<string, SlimNode[]>>();
  /** Requests of the pods on each node, kept as pods come and go (zone balance's capacity). */
  private readonly usage = new Map<string, NodeUsage>();
  /** Kinds only a feature needs that the API server refuses or does not serve, and why. */
  private readonly off = new Map<KindName, string>();
  /** `nodeDerived`'s values, dropped when a node is reshaped. */
  private readonly derived = new Map<string, unknown>();
  private readonly podListeners: PodListener[] = [];
  private readonly workloadListeners: ((w: SlimWorkload) => void)[] = [];
  private readonly nodeListeners: ((before: SlimNode | undefined, after: SlimNode | undefined) => void)[] = [];
  private readonly reportListeners: ((r: SlimScaleReport) => void)[] = [];
  private readonly claimListeners: ((namespace: string, claim: string) => void)[] = [];

  /** Called with the claim a PVC or PV written is about (a claim created or bound, a PV reserved for it). */
  onClaim(listener: (namespace: string, claim: string) => void): void {
    this.claimListeners.push(listener);
  }

  /** Called with each autoscaler report written (a new or repeated refusal for a pod). */
  onScaleReport(listener: (r: SlimScaleReport) => void): void {
    this.reportListeners.push(listener);
  }

  onPod(listener: PodListener): void {
    this.podListeners.push(listener);
  }

  /** Called with a node's cached version before and after each change (undefined: absent). */
  onNode(listener: (before: SlimNode | undefined, after: SlimNode | undefined) => void): void {
    this.nodeListeners.push(listener);
  }

  /** Called with each workload written or removed (its last cached version). */
  onWorkload(listener: (w: SlimWorkload) => void): void {
    this.workloadListeners.push(listener);
  }

  // ---- writes (reflectors and static sources only) ------------------------------

  upsert(kind: KindName, obj: unknown): void {
    if (isWorkloadKindName(kind)) {
      const w = obj as SlimWorkload;
      const key = ownerKey(w.kind, w.namespace, w.name);
      this.removeWorkload(key);
      this.workloads.set(key, w);
      if (w.owner) addTo(this.workloadsByOwner, ownerKey(w.owner.kind, w.namespace, w.owner.name), key, w);
      for (const l of this.workloadListeners) l(w);
      return;
    }
    if (PLAIN_KINDS.has(kind)) {
      const key = this.keyOf(kind, obj);
      if (REPORT_KINDS.has(kind)) this.dropReport(kind, key);
      this.plain.get(kind as PlainKind)!.set(key, obj);
      if (REPORT_KINDS.has(kind)) {
        addTo(this.reportsByPod, (obj as SlimScaleReport).pod.uid, `${kind}/${key}`, obj as SlimScaleReport);
        for (const l of this.reportListeners) l(obj as SlimScaleReport);
      }
      if (kind === 'nodepools') this.derived.clear();
      if (kind === 'persistentvolumeclaims') for (const l of this.claimListeners) l((obj as SlimPVC).namespace, (obj as SlimPVC).name);
      return;
    }
    switch (kind) {
      case 'nodes': {
        const n = obj as SlimNode;
        // Answers write known nodes' names unescaped (encoding.ts): only a valid name is kept.
        if (!isDnsSubdomain(n.name)) return;
        const old = this.nodeSlots.node(n.name);
        this.nodeSlots.set(n);
        this.nodesChanged(reshaped(old, n));
        for (const l of this.nodeListeners) l(old, n);
        return;
      }
      case 'pods': return this.upsertPod(obj as SlimPod);
      case 'persistentvolumes': {
        const v = obj as SlimPV;
        this.deletePVClaim(v.name);
        this.pvs.set(v.name, v);
        if (v.claim) {
          this.pvByClaim.set(nsKey(v.claim.namespace, v.claim.name), v.name);
          for (const l of this.claimListeners) l(v.claim.namespace, v.claim.name);
        }
        return;
      }
    }
  }

  private dropReport(kind: KindName, key: string): void {
    const old = this.plain.get(kind as PlainKind)!.get(key) as SlimScaleReport | undefined;
    if (old) removeFrom(this.reportsByPod, old.pod.uid, `${kind}/${key}`);
  }

  /** Removes by the key `keyOf` returns for the same kind. */
  delete(kind: KindName, key: string): void {
    if (isWorkloadKindName(kind)) {
      const old = this.workloads.get(key);
      this.removeWorkload(key);
      if (old) for (const l of this.workloadListeners) l(old);
      return;
    }
    if (PLAIN_KINDS.has(kind)) {
      if (REPORT_KINDS.has(kind)) this.dropReport(kind, key);
      if (this.plain.get(kind as PlainKind)!.delete(key) && kind === 'nodepools') this.derived.clear();
      return;
    }
    switch (kind) {
      case 'nodes': {
        const old = this.nodeSlots.node(key);
        if (old) this.remember(old);
        this.nodeSlots.delete(key);
        this.nodesChanged(old !== undefined);
        if (old) for (const l of this.nodeListeners) l(old, undefined);
        return;
      }
      case 'pods': {
        const pod = this.podsByKey.get(key);
        if (pod) this.removePod(pod, true);
        return;
      }
      case 'persistentvolumes': this.deletePVClaim(key); this.pvs.delete(key); return;
    }
  }

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

  /** The store key of a slim object of the given kind. */
  keyOf(kind: KindName, obj: unknown): string {
    const o = obj as { name: string; namespace?: string; kind?: string };
    if (isWorkloadKindName(kind)) return ownerKey(o.kind!, o.namespace!, o.name);
    return CLUSTER_SCOPED.has(kind) ? o.name : nsKey(o.namespace!, o.name);
  }

  /** Keys currently held for a kind: a relist deletes the ones it no longer sees. */
  keys(kind: KindName): string[] {
    const plain = this.plain.get(kind as PlainKind);
    if (plain) return [...plain.keys()];
    switch (kind) {
      case 'nodes': return [...this.nodeSlots.names()];
      case 'pods': return [...this.podsByKey.keys()];
      case 'persistentvolumes': return [...this.pvs.keys()];
      default: {
        const spec = Object.values(WORKLOAD_KINDS).find((k) => k.plural === kind)!;
        return [...this.workloads.keys()].filter((k) => k.startsWith(`${spec.kind}/`));
      }
    }
  }

  count(kind: KindName): number {
    const plain = this.plain.get(kind as PlainKind);
    if (plain) return plain.size;
    switch (kind) {
      case 'nodes': return this.nodeSlots.size;
      case 'pods': return this.podsByKey.size;
      case 'persistentvolumes': return this.pvs.size;
      default: return this.keys(kind).length;
    }
  }

  /** Nodes by zone value of one label: built on first use, dropped on any node change. */
  private zoneIndex(topologyKey: string): Map<string, SlimNode[]> {
    let byZone = this.zoneNodes.get(topologyKey);
    if (!byZone) {
      byZone = new Map();
      for (const n of this.nodeSlots.nodes()) {
        const z = n.labels[topologyKey];
        if (z !== undefined) (byZone.get(z) ?? byZone.set(z, []).get(z)!).push(n);
      }
      this.zoneNodes.set(topologyKey, byZone);
    }
    return byZone;
  }

  private nodesChanged(reshaped: boolean): void {
    this.zoneCache.clear();
    this.zoneNodes.clear();
    if (reshaped) this.derived.clear();
  }

  private addUsage(pod: SlimPod, sign: 1 | -1): void {
    if (!pod.nodeName || pod.finished) return;
    const u = this.usage.get(pod.nodeName) ?? { cpuMilli: 0, memory: 0, pods: 0 };
    u.cpuMilli += sign * pod.cpuMilli;
    u.memory += sign * pod.memory;
    u.pods += sign;
    if (u.pods === 0) this.usage.delete(pod.nodeName);
    else this.usage.set(pod.nodeName, u);
  }

  private countSeated(pod: SlimPod, key: string | undefined, sign: 1 | -1): void {
    if (key === undefined || !pod.nodeName || !holdsSeat(pod)) return;
    let counts = this.seatedByOwner.get(key);
    if (!counts) this.seatedByOwner.set(key, (counts = new Map()));
    const n = (counts.get(pod.nodeName) ?? 0) + sign;
    if (n > 0) counts.set(pod.nodeName, n);
    else counts.delete(pod.nodeName);
    if (counts.size === 0) this.seatedByOwner.delete(key);
  }

  private upsertPod(pod: SlimPod): void {
    const key = nsKey(pod.namespace, pod.name);
    const old = this.podsByKey.get(key);
    if (old) this.removePod(old, false);
    this.podsByKey.set(key, pod);
    this.podsByUid.set(pod.uid, pod);
    const owner = pod.owner && ownerKey(pod.owner.kind, pod.namespace, pod.owner.name);
    if (owner !== undefined) addTo(this.podsByOwner, owner, pod.uid, pod);
    if (pod.nodeName) addTo(this.podsByNode, pod.nodeName, pod.uid, pod);
    this.addUsage(pod, 1);
    this.countSeated(pod, owner, 1);
    for (const l of this.podListeners) l('upsert', pod);
  }

  private removePod(pod: SlimPod, notify: boolean): void {
    this.podsByKey.delete(nsKey(pod.namespace, pod.name));
    this.podsByUid.delete(pod.uid);
    const owner = pod.owner && ownerKey(pod.owner.kind, pod.namespace, pod.owner.name);
    if (owner !== undefined) removeFrom(this.podsByOwner, owner, pod.uid);
    if (pod.nodeName) removeFrom(this.podsByNode, pod.nodeName, pod.uid);
    this.addUsage(pod, -1);
    this.countSeated(pod, owner, -1);
    if (notify) for (const l of this.podListeners) l('delete', pod);
  }

  private removeWorkload(key: string): void {
    const old = this.workloads.get(key);
    if (!old) return;
    this.workloads.delete(key);
    if (old.owner) removeFrom(this.workloadsByOwner, ownerKey(old.owner.kind, old.namespace, old.owner.name), key);
  }

  private deletePVClaim(pvName: string): void {
    const old = this.pvs.get(pvName);
    if (!old?.claim) return;
    const k = nsKey(old.claim.namespace, old.claim.name);
    if (this.pvByClaim.get(k) === pvName) this.pvByClaim.delete(k);
  }

  // ---- Snapshot --------------------------------------------------------------------

  node(name: string) { return this.nodeSlots.node(name); }
  nodes() { return this.nodeSlots.nodes(); }
  nodeCount() { return this.nodeSlots.size; }
  resolveNodes(names: readonly string[]) { return this.nodeSlots.resolve(names); }
  nodeAt(slot: number) { return this.nodeSlots.nodeAt(slot); }
  zoneCodes(topologyKey: string) { return this.nodeSlots.zoneCodes(topologyKey); }
  nodesBySlot() { return this.nodeSlots.bySlotView; }

  kindOff(kind: KindName): string | undefined { return this.off.get(kind); }

  /** Set by the kind's reflector. */
  setKindOff(kind: KindName, why: string | undefined): void {
    if (why === undefined) this.off.delete(kind);
    else this.off.set(kind, why);
  }

  nodeDerived<T>(key: string, compute: () => T): T {
    if (this.derived.has(key)) return this.derived.get(key) as T;
    const value = compute();
    if (this.derived.size >= NODE_DERIVED_KEPT) this.derived.delete(this.derived.keys().next().value!);
    this.derived.set(key, value);
    return value;
  }

  zones(topologyKey: string): string[] {
    let zones = this.zoneCache.get(topologyKey);
    if (!zones) {
      zones = [...this.zoneIndex(topologyKey).keys()].filter(Boolean).sort();
      this.zoneCache.set(topologyKey, zones);
    }
    return zones;
  }

  clusterZones(topologyKey: string): string[] {
    return this.nodeDerived(`clusterZones\u0002${topologyKey}`, () => {
      let remembered = this.remembered.get(topologyKey);
      if (!remembered) this.remembered.set(topologyKey, (remembered = new Set()));
      const zones = new Set(remembered);
      for (const [z, nodes] of this.zoneIndex(topologyKey)) if (z && nodes.some((n) => !controlPlane(n))) zones.add(z);
      return [...zones].sort();
    });
  }

  nodePools(): Iterable<SlimNodePool> { return this.pools.values(); }

  scaleReports(podUid: string): readonly SlimScaleReport[] {
    const bucket = this.reportsByPod.get(podUid);
    return bucket ? [...bucket.values()].sort((a, b) => b.at - a.at) : NO_REPORTS;
  }

  pod(namespace: string, name: string) { return this.podsByKey.get(nsKey(namespace, name)); }
  podByUid(uid: string) { return this.podsByUid.get(uid); }
  podsOwnedBy(kind: string, namespace: string, name: string): Iterable<SlimPod> {
    return this.podsByOwner.get(ownerKey(kind, namespace, name))?.values() ?? NONE;
  }

  seatedPodsPerNode(kind: string, namespace: string, name: string): ReadonlyMap<string, number> {
    return this.seatedByOwner.get(ownerKey(kind, namespace, name)) ?? NO_COUNTS;
  }

  podsOnNode(node: string): Iterable<SlimPod> {
    return this.podsByNode.get(node)?.values() ?? NONE;
  }

  nodeUsage(node: string): NodeUsage {
    return this.usage.get(node) ?? NO_USAGE;
  }

  nodesInZone(topologyKey: string, zone: string): readonly SlimNode[] {
    return this.zoneIndex(topologyKey).get(zone) ?? [];
  }

  pvc(namespace: string, name: string) { return this.pvcs.get(nsKey(namespace, name)); }
  pvCount() { return this.pvs.size; }
  pv(name: string) { return this.pvs.get(name); }
  pvForClaim(namespace: string, name: string) {
    const pvName = this.pvByClaim.get(nsKey(namespace, name));
    return pvName === undefined ? undefined : this.pvs.get(pvName);
  }

  storageClass(name: string) { return this.classes.get(name); }
  workload(kind: WorkloadKind, namespace: string, name: string) {
    return this.workloads.get(ownerKey(kind, namespace, name));
  }

  allWorkloads(): Iterable<SlimWorkload> {
    return this.workloads.values();
  }

  ownedWorkloads(kind: string, namespace: string, name: string): Iterable<SlimWorkload> {
    return this.workloadsByOwner.get(ownerKey(kind, namespace, name))?.values() ?? [];
  }

  *workloadSpreads(namespace: string): Iterable<SlimWorkloadSpread> {
    for (const s of this.spreads.values()) if (s.namespace === namespace) yield s;
  }

  allWorkloadSpreads(): Iterable<SlimWorkloadSpread> {
    return this.spreads.values();
  }
}
