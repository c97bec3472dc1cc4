import type { SlimAutoscalerStatus, SlimNodePool, SlimPod, SlimPV, SlimPVC, SlimScaleReport, SlimStorageClass, SlimWorkload, SlimWorkloadSpread } from './objects.js';
import { isWorkloadKindName, type KindName, type WorkloadKind } from './kinds.js';
import { Indexer } from './indexer.js';
import { NodeSlots } from './nodeSlots.js';

const nsKey = (namespace: string, name: string) => `${namespace}/${name}`;
export const ownerKey = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;
const NO_REPORTS: readonly SlimScaleReport[] = [];
const CLUSTER_SCOPED: ReadonlySet<KindName> = new Set<KindName>(['nodes', 'persistentvolumes', 'storageclasses', 'nodepools']);

/**
 * Slim objects by kind, each kind in an Indexer (indexer.ts) with the named indexes the
 * policies read: pods by UID, controller owner and node; PVs by claim; workloads by kind and
 * owner; WorkloadSpreads by namespace; autoscaler reports by pod. Nodes in their slots
 * (nodeSlots.ts). Only the store writes here, through its table of kinds.
 */
export class IndexedObjects {
  readonly nodes = new NodeSlots();
  readonly pods = new Indexer<SlimPod, 'owner' | 'node', 'uid'>((p) => nsKey(p.namespace, p.name), {
    owner: (p) => p.owner && ownerKey(p.owner.kind, p.namespace, p.owner.name),
    node: (p) => p.nodeName || undefined,
  }, { uid: (p) => p.uid });

  readonly pvs = new Indexer<SlimPV, 'claim' | 'claimNamespace'>((v) => v.name, {
    claim: (v) => v.claim && nsKey(v.claim.namespace, v.claim.name), claimNamespace: (v) => v.claim?.namespace,
  });

  readonly pvcs = new Indexer<SlimPVC, 'namespace'>((c) => nsKey(c.namespace, c.name), { namespace: (c) => c.namespace });
  readonly classes = new Indexer<SlimStorageClass>((c) => c.name);
  readonly workloads = new Indexer<SlimWorkload, 'kind' | 'owner'>((w) => ownerKey(w.kind, w.namespace, w.name), {
    kind: (w) => w.kind,
    owner: (w) => w.owner && ownerKey(w.owner.kind, w.namespace, w.owner.name),
  });

  readonly spreads = new Indexer<SlimWorkloadSpread, 'namespace'>((w) => nsKey(w.namespace, w.name), { namespace: (w) => w.namespace });
  readonly pools = new Indexer<SlimNodePool>((p) => p.name);
  readonly autoscalerStatuses = new Indexer<SlimAutoscalerStatus>((c) => nsKey(c.namespace, c.name));
  /** Autoscaler reports (Events) of each source, indexed by the pod they are about. */
  readonly reports = (['scaleupreports', 'karpenterreports'] as const).map((kind) => ({
    kind, indexer: new Indexer<SlimScaleReport, 'pod'>((r) => nsKey(r.namespace, r.name), { pod: (r) => r.pod.uid }),
  }));

  /** The key of a slim object of the given kind. */
  keyOf(kind: KindName, obj: unknown): string {
    const o = obj as { name: string; namespace?: string; kind?: string };
    if (isWorkloadKindName(kind)) return ownerKey(o.kind!, o.namespace!, o.name);
    return CLUSTER_SCOPED.has(kind) ? o.name : nsKey(o.namespace!, o.name);
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

  podsOnNode(node: string): Iterable<SlimPod> { return this.pods.byIndex('node', node); }

  pvc(namespace: string, name: string) { return this.pvcs.get(nsKey(namespace, name)); }
  pv(name: string) { return this.pvs.get(name); }
  pvForClaim(namespace: string, name: string) { return this.pvs.first('claim', nsKey(namespace, name)); }

  *claimNamesIn(namespace: string) {
    for (const c of this.pvcs.byIndex('namespace', namespace)) yield c.name;
    for (const v of this.pvs.byIndex('claimNamespace', namespace)) if (v.claim && !this.pvcs.get(nsKey(namespace, v.claim.name))) yield v.claim.name;
  }

  workload(kind: WorkloadKind, namespace: string, name: string) {
    return this.workloads.get(ownerKey(kind, namespace, name));
  }

  ownedWorkloads(kind: string, namespace: string, name: string): Iterable<SlimWorkload> {
    return this.workloads.byIndex('owner', ownerKey(kind, namespace, name));
  }

  workloadSpreads(namespace: string): Iterable<SlimWorkloadSpread> {
    return this.spreads.byIndex('namespace', namespace);
  }
}
