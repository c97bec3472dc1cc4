import type { NodeNeeds, NodeSelection, NodeSelectorRequirement, SlimNodePool } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { needsKey, nodeFit } from './nodeFit.js';
import { tolerator } from './nodeMatching.js';

// The zones a pod can use now, can grow into, or never (docs/design.md#the-zones-a-workload-can-use):
// now, a node it fits is there; grow, a Karpenter NodePool it is compatible with offers the zone
// (as Karpenter's provisioner matches one), else a Cluster Autoscaler runs (its status ConfigMap is
// there), the zone is one of the cluster's and nothing in the pod's own spec rules it out.

type Reach = 'now' | 'grow' | 'never';

export type GrowInto = 'auto' | 'cluster' | 'nodePools';

/** Whether the cluster's zones count for a pod no NodePool takes, and on whose word (the status ConfigMap found). */
function clusterGrowth(growInto: GrowInto | undefined, snapshot: Snapshot): GrowthSource | undefined {
  if (growInto === 'nodePools') return undefined;
  const autoscaler = snapshot.clusterAutoscaler();
  return growInto === 'cluster' || autoscaler !== undefined ? { kind: 'cluster', autoscaler } : undefined;
}

/** Where a zone the pod can grow into comes from: the NodePools that offer it, or the cluster (by the Cluster Autoscaler found, or configuration). */
export type GrowthSource = { kind: 'nodepools'; names: readonly string[] } | { kind: 'cluster'; autoscaler: string | undefined };

export interface ZoneReach {
  /** Zones with a node the pod fits, whatever its state. */
  now: ReadonlySet<string>;
  /** Zones without such a node that it can grow into, and from where. */
  grow: ReadonlyMap<string, GrowthSource>;
  /** `now` and `grow`, sorted: what a derived zone list holds. */
  sorted: readonly string[];
  of(zone: string): Reach;
}

/** How far zones the cluster has count for a pod no NodePool takes (config `placement.growInto`). */
export interface GrowthSettings {
  /** `auto` (the default): the cluster's zones where a Cluster Autoscaler runs, else none; `cluster`: always; `nodePools`: never. */
  growInto?: GrowInto;
  /** Zones the cluster has beside those of its nodes (a node group in a zone never used yet). */
  clusterZones?: readonly string[];
  topologyKey: string;
}

// Labels every Karpenter node carries from its instance type and offering, whatever the NodePool
// says: a pod may ask for them of a NodePool that names none (Karpenter's WellKnownLabels).
const WELL_KNOWN = new Set([
  'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type',
  'kubernetes.io/arch', 'kubernetes.io/os', 'karpenter.sh/capacity-type', 'kubernetes.io/hostname',
  'node.kubernetes.io/windows-build',
]);

/** What a NodePool (or the cluster) says of a label: its values, all but some, none, or nothing known. */
type Domain = { in: ReadonlySet<string> } | { notIn: ReadonlySet<string> } | 'absent' | undefined;

/** The domain of each label a NodePool in one zone defines; the zone label is the zone alone. */
function poolDomains(pool: SlimNodePool | undefined, topologyKey: string, zone: string): Map<string, Domain> {
  const out = new Map<string, Domain>();
  for (const r of pool?.requirements ?? []) {
    const d: Domain = r.operator === 'In' ? { in: new Set(r.values) } : r.operator === 'NotIn' ? { notIn: new Set(r.values) }
      : r.operator === 'Exists' ? { notIn: new Set() } : r.operator === 'DoesNotExist' ? 'absent' : undefined;
    if (d !== undefined) out.set(r.key, narrow(out.get(r.key), d));
  }
  for (const [k, v] of Object.entries(pool?.labels ?? {})) out.set(k, narrow(out.get(k), { in: new Set([v]) }));
  out.set(topologyKey, narrow(out.get(topologyKey), { in: new Set([zone]) }));
  return out;
}

/** Both domains at once. */
function narrow(a: Domain, b: Domain): Domain {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === 'absent' || b === 'absent') return a === b ? 'absent' : { in: new Set() };
  if ('in' in a && 'in' in b) return { in: new Set([...a.in].filter((v) => b.in.has(v))) };
  if ('in' in a) return { in: new Set([...a.in].filter((v) => !(b as { notIn: ReadonlySet<string> }).notIn.has(v))) };
  if ('in' in b) return narrow(b, a);
  return { notIn: new Set([...a.notIn, ...(b as { notIn: ReadonlySet<string> }).notIn]) };
}

/** A pod's requirement can hold on a node of this domain; `unknownHolds`: a label the domain does not define may be anything. */
function possible(r: NodeSelectorRequirement, d: Domain, unknownHolds: boolean): boolean {
  if (d === undefined) {
    if (r.operator === 'NotIn' || r.operator === 'DoesNotExist') return true;
    return unknownHolds || WELL_KNOWN.has(r.key);
  }
  if (d === 'absent') return r.operator === 'NotIn' || r.operator === 'DoesNotExist';
  switch (r.operator) {
    case 'In': return 'in' in d ? r.values.some((v) => d.in.has(v)) : r.values.some((v) => !d.notIn.has(v));
    case 'NotIn': return 'in' in d ? [...d.in].some((v) => !r.values.includes(v)) : true;
    case 'Exists': return 'in' in d ? d.in.size > 0 : true;
    case 'DoesNotExist': return 'notIn' in d;
    // Gt and Lt: a number among the values, or any where the values are open.
    default: return 'in' in d ? d.in.size > 0 : true;
  }
}

/** The pod's node selector and one of its required terms can hold on a node of these domains (a new node's name is unknown: matchFields never hold). */
function selectionPossible(selection: NodeSelection | undefined, domains: ReadonlyMap<string, Domain>, unknownHolds: boolean): boolean {
  if (!selection) return true;
  for (const k in selection.nodeSelector) {
    if (!possible({ key: k, operator: 'In', values: [selection.nodeSelector[k]!] }, domains.get(k), unknownHolds)) return false;
  }
  if (selection.affinity === undefined) return true;
  return selection.affinity.some((t) => t.matchFields.length === 0 && t.matchExpressions.length > 0
    && t.matchExpressions.every((r) => possible(r, domains.get(r.key), unknownHolds)));
}

/** The zones a NodePool offers on a label: those its requirements or labels name, else the cluster's (less those it excludes). */
function offered(pool: SlimNodePool, topologyKey: string, clusterZones: readonly string[]): string[] {
  const named = new Set<string>();
  for (const r of pool.requirements) if (r.key === topologyKey && r.operator === 'In') for (const v of r.values) named.add(v);
  const label = pool.labels[topologyKey];
  if (label !== undefined) named.add(label);
  return (named.size > 0 ? [...named] : clusterZones).filter((z) => {
    const d = poolDomains(pool, topologyKey, z).get(topologyKey);
    return d !== undefined && d !== 'absent' && ('in' in d ? d.in.has(z) : !d.notIn.has(z));
  });
}

/** The zones of the pod's reach (see ZoneReach): computed once per distinct needs, kept until a node or a NodePool changes. */
export function zoneReach(needs: NodeNeeds, snapshot: Snapshot, settings: GrowthSettings): ZoneReach {
  const { topologyKey } = settings;
  // The status ConfigMap's coming and going drops every node-derived answer, so it needs no place in the key.
  return snapshot.nodeDerived(`reach\u0002${topologyKey}\u0002${settings.growInto ?? 'auto'}\u0002${settings.clusterZones?.join(',') ?? ''}\u0002${needsKey(needs)}`, () => {
    const now = nodeFit(needs, snapshot).zones(topologyKey).set;
    const cluster = [...new Set([...snapshot.clusterZones(topologyKey), ...(topologyKey === settings.topologyKey ? settings.clusterZones ?? [] : [])])];
    const grow = new Map<string, GrowthSource>();
    const tolerates = tolerator(needs.tolerations);
    let pooled = false;
    for (const pool of snapshot.nodePools()) {
      if (!tolerates({ name: pool.name, labels: pool.labels, zone: undefined, taints: pool.taints, allocatable: { cpuMilli: 0, memory: 0, pods: 0 },
        unschedulable: false, ready: true })) continue;
      for (const zone of offered(pool, topologyKey, cluster)) {
        if (!selectionPossible(needs.selection, poolDomains(pool, topologyKey, zone), false)) continue;
        pooled = true;
        if (now.has(zone)) continue;
        const had = grow.get(zone);
        grow.set(zone, { kind: 'nodepools', names: had?.kind === 'nodepools' ? [...had.names, pool.name] : [pool.name] });
      }
    }
    // No NodePool takes the pod: where a Cluster Autoscaler runs, the cluster's zones its own spec
    // allows (node groups scaled to zero, whose labels and taints the cluster does not show).
    const fromCluster = pooled ? undefined : clusterGrowth(settings.growInto, snapshot);
    if (fromCluster) {
      for (const zone of cluster) {
        if (now.has(zone) || !selectionPossible(needs.selection, poolDomains(undefined, topologyKey, zone), true)) continue;
        grow.set(zone, fromCluster);
      }
    }
    const sorted = [...new Set([...now, ...grow.keys()])].sort();
    return { now, grow, sorted, of: (zone: string): Reach => (now.has(zone) ? 'now' : grow.has(zone) ? 'grow' : 'never') };
  });
}

/** How a zone the pod can grow into is described in a reason. */
export function growthText(source: GrowthSource | undefined): string {
  if (!source) return 'nothing can add one';
  if (source.kind === 'nodepools') return `Karpenter NodePool ${source.names.slice(0, 3).join(', ')}${source.names.length > 3 ? ', …' : ''} can add one`;
  return source.autoscaler ? `Cluster Autoscaler (${source.autoscaler}) may add one` : 'an autoscaler may add one (placement.growInto: cluster)';
}
