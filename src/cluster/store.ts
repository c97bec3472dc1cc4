import { holdsSeat, type SlimAutoscalerStatus, type SlimNode, type SlimNodePool, type SlimPod, type SlimPV, type SlimPVC, type SlimScaleReport, type SlimStorageClass, type SlimWorkload, type SlimWorkloadSpread } from './objects.js';
import { type WorkloadKind } from './kinds.js';
import { isDnsSubdomain } from './names.js';
import { ZONE_LABEL } from './annotations.js';
import { Indexer } from './indexer.js';
import { NodeSlots } from './nodeSlots.js';
import type { NodeUsage, PodListener, Snapshot } from './snapshot.js';
import { isWorkloadKindName, WORKLOAD_KINDS, type KindName } from './kinds.js';

export type { KindName } from './kinds.js';

export type { NodeUsage, PodListener, Snapshot } from './snapshot.js';

const nsKey = (namespace: string, name: string) => `${namespace}/${name}`;
const ownerKey = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;
const NO_USAGE: NodeUsage = { cpuMilli: 0, memory: 0, pods: 0 };
const NO_COUNTS: ReadonlyMap<string, number> = new Map();
/** Values `nodeDerived` keeps: one per distinct pod template's needs, bounded by the cluster. */
const NODE_DERIVED_KEPT = 4096;
/** Zones remembered per label after their last node went away: a bound whatever the churn. */
const REMEMBERED_ZONES = 64;
const NO_REPORTS: readonly SlimScaleReport[] = [];

const CONTROL_PLANE_ROLES = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

/** A control-plane node, by its role label or taint: its zone is no zone that workloads grow into (its nodes are not theirs). */
function controlPlane(n: SlimNode): boolean {
  return CONTROL_PLANE_ROLES.some((role) => role in n.labels || n.taints.some((t) => t.key === role));
}

const CLUSTER_SCOPED: ReadonlySet<KindName> = new Set<KindName>(['nodes', 'persistentvolumes', 'storageclasses', 'nodepools']);

/** What the store does with one kind: its objects' key, and writes (each kind's Indexer and the effects of a change). */
interface KindEntry {
  upsert(obj: unknown): void;
  delete(key: string): void;
  keys(): Iterable<string>;
  count(): number;
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
 * Slim objects by kind, each kind in an Indexer (indexer.ts) with the named indexes the
 * policies read: pods by UID, controller owner and node; PVs by claim; workloads by kind and
 * owner; WorkloadSpreads by namespace; autoscaler reports by pod. Beside them, what is
 * derived as objects come and go: node slots and zones, requests per node, seated pods per
 * owner and node, zones remembered.
 */
export class ClusterStore implements Snapshot {
  private readonly nodeSlots = new NodeSlots();
  private readonly pods = new Indexer<SlimPod, 'owner' | 'node', 'uid'>((p) => nsKey(p.namespace, p.name), {
    owner: (p) => p.owner && ownerKey(p.owner.kind, p.namespace, p.owner.name),
    node: (p) => p.nodeName || undefined,
  }, { uid: (p) => p.uid });

  private readonly seatedByOwner = new Map<string, Map<string, number>>();
  private readonly pvs = new Indexer<SlimPV, 'claim' | 'claimNamespace'>((v) => v.name, {
    claim: (v) => v.claim && nsKey(v.claim.namespace, v.claim.name), claimNamespace: (v) => v.claim?.namespace,
  });

  private readonly pvcs = new Indexer<SlimPVC, 'namespace'>((c) => nsKey(c.namespace, c.name), { namespace: (c) => c.namespace });
  private readonly classes = new Indexer<SlimStorageClass>((c) => c.name);
  private readonly workloads = new Indexer<SlimWorkload, 'kind' | 'owner'>((w) => ownerKey(w.kind, w.namespace, w.name), {
    kind: (w) => w.kind,
    owner: (w) => w.owner && ownerKey(w.owner.kind, w.namespace, w.owner.name),
  });

  private readonly spreads = new Indexer<SlimWorkloadSpread, 'namespace'>((w) => nsKey(w.namespace, w.name), { namespace: (w) => w.namespace });
  private readonly pools = new Indexer<SlimNodePool>((p) => p.name);
  private readonly autoscalerStatuses = new Indexer<SlimAutoscalerStatus>((c) => nsKey(c.namespace, c.name));
  /** Autoscaler reports (Events) of each source, indexed by the pod they are about. */
  private readonly reports = (['scaleupreports', 'karpenterreports'] as const).map((kind) => ({
    kind, indexer: new Indexer<SlimScaleReport, 'pod'>((r) => nsKey(r.namespace, r.name), { pod: (r) => r.pod.uid }),
  }));

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
  private readonly classListeners: (() => void)[] = [];
  /** Every kind's writes: no switch on the kind anywhere else. */
  private readonly entries: ReadonlyMap<KindName, KindEntry> = this.kindEntries();

  /** Called with the claim a PVC or PV written is about (a claim created or bound, a PV reserved for it). */
  onClaim(listener: (namespace: string, claim: string) => void): void {
    this.claimListeners.push(listener);
  }

  /** Called when a StorageClass is written or removed (which class is the default may have changed). */
  onStorageClass(listener: () => void): void {
    this.classListeners.push(listener);
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
    this.entries.get(kind)?.upsert(obj);
  }

  /** Removes by the key `keyOf` returns for the same kind. */
  delete(kind: KindName, key: string): void {
    this.entries.get(kind)?.delete(key);
  }

  /** Keys currently held for a kind: a relist deletes the ones it no longer sees. */
  keys(kind: KindName): string[] {
    return [...this.entries.get(kind)?.keys() ?? []];
  }

  count(kind: KindName): number {
    return this.entries.get(kind)?.count() ?? 0;
  }

  /** The store key of a slim object of the given kind. */
  keyOf(kind: KindName, obj: unknown): string {
    const o = obj as { name: string; namespace?: string; kind?: string };
    if (isWorkloadKindName(kind)) return ownerKey(o.kind!, o.namespace!, o.name);
    return CLUSTER_SCOPED.has(kind) ? o.name : nsKey(o.namespace!, o.name);
  }

  private kindEntries(): Map<KindName, KindEntry> {
    const entries = new Map<KindName, KindEntry>();
    /** A kind kept in `indexer`, with what a change of one of its objects sets off. */
    const kept = <T>(indexer: Indexer<T, string, string>, changed: (now: T | undefined, old: T | undefined) => void = () => {}): KindEntry => ({
      upsert: (obj) => changed(obj as T, indexer.upsert(obj as T)),
      delete: (key) => {
        const old = indexer.delete(key);
        if (old !== undefined) changed(undefined, old);
      },
      keys: () => indexer.keys(),
      count: () => indexer.size,
    });
    const claimed = (namespace: string, name: string) => { for (const l of this.claimListeners) l(namespace, name); };
    entries.set('pods', kept(this.pods, (now, old) => {
      if (old) this.podGone(old);
      if (now) this.podCame(now);
      if (old && !now) for (const l of this.podListeners) l('delete', old);
    }));
    entries.set('persistentvolumes', kept(this.pvs, (now) => { if (now?.claim) claimed(now.claim.namespace, now.claim.name); }));
    entries.set('persistentvolumeclaims', kept(this.pvcs, (now) => { if (now) claimed(now.namespace, now.name); }));
    entries.set('storageclasses', kept(this.classes, () => { for (const l of this.classListeners) l(); }));
    entries.set('workloadspreads', kept(this.spreads));
    entries.set('nodepools', kept(this.pools, () => this.derived.clear()));
    // Rewritten every scan (10 s): only its coming or going changes the zones pods can grow into.
    entries.set('autoscalerstatus', kept(this.autoscalerStatuses, (now, old) => { if (!now !== !old) this.derived.clear(); }));
    for (const { kind, indexer } of this.reports) entries.set(kind, kept(indexer, (now) => { if (now) for (const l of this.reportListeners) l(now); }));
    for (const spec of Object.values(WORKLOAD_KINDS)) {
      entries.set(spec.plural, {
        upsert: (obj) => {
          this.workloads.upsert(obj as SlimWorkload);
          for (const l of this.workloadListeners) l(obj as SlimWorkload);
        },
        delete: (key) => {
          const old = this.workloads.delete(key);
          if (old) for (const l of this.workloadListeners) l(old);
        },
        keys: () => [...this.workloads.byIndex('kind', spec.kind)].map((w) => this.workloads.keyOf(w)),
        count: () => [...this.workloads.byIndex('kind', spec.kind)].length,
      });
    }
    entries.set('nodes', {
      upsert: (obj) => {
        const n = obj as SlimNode;
        // Answers write known nodes' names unescaped (encoding.ts): only a valid name is kept.
        if (!isDnsSubdomain(n.name)) return;
        const old = this.nodeSlots.node(n.name);
        this.nodeSlots.set(n);
        this.nodesChanged(reshaped(old, n));
        for (const l of this.nodeListeners) l(old, n);
      },
      delete: (key) => {
        const old = this.nodeSlots.node(key);
        if (old) this.remember(old);
        this.nodeSlots.delete(key);
        this.nodesChanged(old !== undefined);
        if (old) for (const l of this.nodeListeners) l(old, undefined);
      },
      keys: () => this.nodeSlots.names(),
      count: () => this.nodeSlots.size,
    });
    return entries;
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

  /** A pod written: its requests and seat counted; its listeners told. */
  private podCame(pod: SlimPod): void {
    this.addUsage(pod, 1);
    this.countSeated(pod, pod.owner && ownerKey(pod.owner.kind, pod.namespace, pod.owner.name), 1);
    for (const l of this.podListeners) l('upsert', pod);
  }

  private podGone(pod: SlimPod): void {
    this.addUsage(pod, -1);
    this.countSeated(pod, pod.owner && ownerKey(pod.owner.kind, pod.namespace, pod.owner.name), -1);
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

  clusterAutoscaler(): string | undefined {
    for (const c of this.autoscalerStatuses.values()) return `${c.namespace}/${c.name}`;
    return undefined;
  }

  scaleReports(podUid: string): readonly SlimScaleReport[] {
    const reports = this.reports.flatMap((r) => [...r.indexer.byIndex('pod', podUid)]);
    return reports.length > 0 ? reports.sort((a, b) => b.at - a.at) : NO_REPORTS;
  }

  pod(namespace: string, name: string) { return this.pods.get(nsKey(namespace, name)); }
  podByUid(uid: string) { return this.pods.byUnique('uid', uid); }
  podsOwnedBy(kind: string, namespace: string, name: string): Iterable<SlimPod> {
    return this.pods.byIndex('owner', ownerKey(kind, namespace, name));
  }

  seatedPodsPerNode(kind: string, namespace: string, name: string): ReadonlyMap<string, number> {
    return this.seatedByOwner.get(ownerKey(kind, namespace, name)) ?? NO_COUNTS;
  }

  podsOnNode(node: string): Iterable<SlimPod> {
    return this.pods.byIndex('node', node);
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
  pvForClaim(namespace: string, name: string) { return this.pvs.first('claim', nsKey(namespace, name)); }

  storageClass(name: string) { return this.classes.get(name); }
  storageClasses() { return this.classes.values(); }
  *claimNamesIn(namespace: string) {
    for (const c of this.pvcs.byIndex('namespace', namespace)) yield c.name;
    for (const v of this.pvs.byIndex('claimNamespace', namespace)) if (v.claim && !this.pvcs.get(nsKey(namespace, v.claim.name))) yield v.claim.name;
  }

  workload(kind: WorkloadKind, namespace: string, name: string) {
    return this.workloads.get(ownerKey(kind, namespace, name));
  }

  allWorkloads(): Iterable<SlimWorkload> {
    return this.workloads.values();
  }

  ownedWorkloads(kind: string, namespace: string, name: string): Iterable<SlimWorkload> {
    return this.workloads.byIndex('owner', ownerKey(kind, namespace, name));
  }

  workloadSpreads(namespace: string): Iterable<SlimWorkloadSpread> {
    return this.spreads.byIndex('namespace', namespace);
  }

  allWorkloadSpreads(): Iterable<SlimWorkloadSpread> {
    return this.spreads.values();
  }
}
