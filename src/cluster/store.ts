import type { SlimNode, SlimPod, SlimScaleReport, SlimWorkload, SlimWorkloadSpread } from './objects.js';
import { isDnsSubdomain } from './names.js';
import type { Indexer } from './indexer.js';
import type { NodeUsage, PodListener, Snapshot } from './snapshot.js';
import { WORKLOAD_KINDS, type KindName, type WorkloadKind } from './kinds.js';
import { IndexedObjects, ownerKey } from './indexedObjects.js';
import { ChangeListeners } from './changeListeners.js';
import { DerivedCaches } from './derivedCaches.js';

export type { KindName } from './kinds.js';

export type { NodeUsage, PodListener, Snapshot } from './snapshot.js';

/** What the store does with one kind: its objects' key, and writes (each kind's Indexer and the effects of a change). */
interface KindEntry {
  upsert(obj: unknown): void;
  delete(key: string): void;
  keys(): Iterable<string>;
  count(): number;
}

const podOwner = (p: SlimPod) => p.owner && ownerKey(p.owner.kind, p.namespace, p.owner.name);

/**
 * The cluster as the watch cache keeps it, in three parts: the indexed objects
 * (indexedObjects.ts), what is derived from them as they come and go (derivedCaches.ts), and
 * who is told of each change (changeListeners.ts). One table says what each kind's writes set
 * off in the other two; no switch on the kind anywhere else.
 */
export class ClusterStore implements Snapshot {
  private readonly objects = new IndexedObjects();
  private readonly derived = new DerivedCaches(() => this.objects.nodes.nodes());
  private readonly listeners = new ChangeListeners();
  /** Kinds only a feature needs that the API server refuses or does not serve, and why. */
  private readonly off = new Map<KindName, string>();
  private readonly entries: ReadonlyMap<KindName, KindEntry> = this.kindEntries();

  onClaim(listener: (namespace: string, claim: string) => void): void { this.listeners.onClaim(listener); }
  onStorageClass(listener: () => void): void { this.listeners.onStorageClass(listener); }
  onScaleReport(listener: (r: SlimScaleReport) => void): void { this.listeners.onScaleReport(listener); }
  onPod(listener: PodListener): void { this.listeners.onPod(listener); }
  onNode(listener: (before: SlimNode | undefined, after: SlimNode | undefined) => void): void { this.listeners.onNode(listener); }
  onWorkload(listener: (w: SlimWorkload) => void): void { this.listeners.onWorkload(listener); }

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
  keyOf(kind: KindName, obj: unknown): string { return this.objects.keyOf(kind, obj); }

  /** Set by the kind's reflector. */
  setKindOff(kind: KindName, why: string | undefined): void {
    if (why === undefined) this.off.delete(kind);
    else this.off.set(kind, why);
  }

  private kindEntries(): Map<KindName, KindEntry> {
    const { objects: o, derived, listeners } = this;
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
    entries.set('pods', kept(o.pods, (now, old) => {
      if (old) derived.podCounted(old, podOwner(old), -1);
      if (now) {
        derived.podCounted(now, podOwner(now), 1);
        listeners.podChanged('upsert', now);
      } else if (old) listeners.podChanged('delete', old);
    }));
    entries.set('persistentvolumes', kept(o.pvs, (now) => { if (now?.claim) listeners.claimChanged(now.claim.namespace, now.claim.name); }));
    entries.set('persistentvolumeclaims', kept(o.pvcs, (now) => { if (now) listeners.claimChanged(now.namespace, now.name); }));
    entries.set('storageclasses', kept(o.classes, () => listeners.storageClassChanged()));
    entries.set('workloadspreads', kept(o.spreads));
    entries.set('nodepools', kept(o.pools, () => derived.dropNodeDerived()));
    // Rewritten every scan (10 s): only its coming or going changes the zones pods can grow into.
    entries.set('autoscalerstatus', kept(o.autoscalerStatuses, (now, old) => { if (!now !== !old) derived.dropNodeDerived(); }));
    for (const { kind, indexer } of o.reports) entries.set(kind, kept(indexer, (now) => { if (now) listeners.scaleReported(now); }));
    for (const spec of Object.values(WORKLOAD_KINDS)) {
      entries.set(spec.plural, {
        upsert: (obj) => {
          o.workloads.upsert(obj as SlimWorkload);
          listeners.workloadChanged(obj as SlimWorkload);
        },
        delete: (key) => {
          const old = o.workloads.delete(key);
          if (old) listeners.workloadChanged(old);
        },
        keys: () => [...o.workloads.byIndex('kind', spec.kind)].map((w) => o.workloads.keyOf(w)),
        count: () => [...o.workloads.byIndex('kind', spec.kind)].length,
      });
    }
    entries.set('nodes', {
      upsert: (obj) => {
        const n = obj as SlimNode;
        // Answers write known nodes' names unescaped (encoding.ts): only a valid name is kept.
        if (!isDnsSubdomain(n.name)) return;
        const old = o.nodes.node(n.name);
        o.nodes.set(n);
        derived.nodeChanged(old, n);
        listeners.nodeChanged(old, n);
      },
      delete: (key) => {
        const old = o.nodes.node(key);
        if (!old) return;
        o.nodes.delete(key);
        derived.nodeChanged(old, undefined);
        listeners.nodeChanged(old, undefined);
      },
      keys: () => o.nodes.names(),
      count: () => o.nodes.size,
    });
    return entries;
  }

  // ---- Snapshot --------------------------------------------------------------------

  node(name: string) { return this.objects.nodes.node(name); }
  nodes() { return this.objects.nodes.nodes(); }
  nodeCount() { return this.objects.nodes.size; }
  resolveNodes(names: readonly string[]) { return this.objects.nodes.resolve(names); }
  nodeAt(slot: number) { return this.objects.nodes.nodeAt(slot); }
  zoneCodes(topologyKey: string) { return this.objects.nodes.zoneCodes(topologyKey); }
  nodesBySlot() { return this.objects.nodes.bySlotView; }
  kindOff(kind: KindName): string | undefined { return this.off.get(kind); }

  nodeDerived<T>(key: string, compute: () => T): T { return this.derived.nodeDerived(key, compute); }
  /** Changes whenever a node comes, goes or has its labels or taints changed: what is kept per node set keys on it. */
  nodesVersion(): number { return this.derived.nodesVersion(); }
  zones(topologyKey: string): string[] { return this.derived.zones(topologyKey); }
  clusterZones(topologyKey: string): string[] { return this.derived.clusterZones(topologyKey); }
  nodesInZone(topologyKey: string, zone: string): readonly SlimNode[] { return this.derived.nodesInZone(topologyKey, zone); }
  nodeUsage(node: string): NodeUsage { return this.derived.nodeUsage(node); }
  seatedPodsPerNode(kind: string, namespace: string, name: string): ReadonlyMap<string, number> {
    return this.derived.seatedPodsPerNode(ownerKey(kind, namespace, name));
  }

  nodePools() { return this.objects.nodePools(); }
  clusterAutoscaler() { return this.objects.clusterAutoscaler(); }
  scaleReports(podUid: string) { return this.objects.scaleReports(podUid); }
  pod(namespace: string, name: string) { return this.objects.pod(namespace, name); }
  podByUid(uid: string) { return this.objects.podByUid(uid); }
  podsOwnedBy(kind: string, namespace: string, name: string) { return this.objects.podsOwnedBy(kind, namespace, name); }
  podsOnNode(node: string) { return this.objects.podsOnNode(node); }
  pvc(namespace: string, name: string) { return this.objects.pvc(namespace, name); }
  pvCount() { return this.objects.pvs.size; }
  pv(name: string) { return this.objects.pv(name); }
  pvForClaim(namespace: string, name: string) { return this.objects.pvForClaim(namespace, name); }
  storageClass(name: string) { return this.objects.classes.get(name); }
  storageClasses() { return this.objects.classes.values(); }
  claimNamesIn(namespace: string) { return this.objects.claimNamesIn(namespace); }
  workload(kind: WorkloadKind, namespace: string, name: string) { return this.objects.workload(kind, namespace, name); }
  allWorkloads(): Iterable<SlimWorkload> { return this.objects.workloads.values(); }
  ownedWorkloads(kind: string, namespace: string, name: string) { return this.objects.ownedWorkloads(kind, namespace, name); }
  workloadSpreads(namespace: string) { return this.objects.workloadSpreads(namespace); }
  allWorkloadSpreads(): Iterable<SlimWorkloadSpread> { return this.objects.spreads.values(); }
}
