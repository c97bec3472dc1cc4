import type { ClusterTaint, SlimMemberCluster } from '../cluster/karmada.js';
import type { ClusterAffinity, ClusterToleration } from '../cluster/karmadaPlacement.js';
import type { NodeSelectorRequirement, Taint } from '../cluster/objects.js';
import { matchRequirement, tolerates } from './nodeMatching.js';

// Karmada's filters on a member (pkg/util/selector.go ClusterMatches, the TaintToleration plugin), as
// karmada-scheduler v1.19 applies them (docs/design.md#across-clusters).

/** The `zone` field over a member's zones: In holds when any zone is listed, NotIn when none is; Exists and DoesNotExist on whether it has any. */
function zonesMatch(r: NodeSelectorRequirement, zones: readonly string[]): boolean {
  switch (r.operator) {
    case 'In': return zones.some((z) => r.values.includes(z));
    case 'NotIn': return zones.every((z) => !r.values.includes(z));
    case 'Exists': return zones.length > 0;
    case 'DoesNotExist': return zones.length === 0;
    default: return false;
  }
}

/** A member inside an affinity: not excluded, and its labels, fields and name all match. */
export function clusterMatches(a: ClusterAffinity, c: SlimMemberCluster): boolean {
  if (a.exclude.includes(c.name)) return false;
  if (a.labels && !a.labels.every((r) => matchRequirement(r, c.labels[r.key]))) return false;
  const field = (key: string) => (key === 'provider' ? c.provider : key === 'region' ? c.region : '') || undefined;
  if (a.fields && !a.fields.every((r) => (r.key === 'zone' ? zonesMatch(r, c.zones) : matchRequirement(r, field(r.key))))) return false;
  return a.names.length === 0 || a.names.includes(c.name);
}

/** The first NoSchedule or NoExecute taint the placement does not tolerate (tolerationSeconds aside, as Karmada's filter reads it). */
export function untoleratedTaint(ts: readonly ClusterToleration[], taints: readonly Taint[]): Taint | undefined {
  return taints.find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !ts.some((x) => tolerates(x, t)));
}

/**
 * When Karmada's taint manager evicts a binding from a member (pkg/util/helper/taint.go): at once (-Infinity) when a
 * NoExecute taint matches no toleration; else at the earliest timeAdded + tolerationSeconds of the first toleration
 * matching each taint, over every taint it matches; undefined when each is tolerated for good.
 */
export function evictionAt(ts: readonly ClusterToleration[], taints: readonly ClusterTaint[]): number | undefined {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  const used: ClusterToleration[] = [];
  for (const t of noExecute) {
    const first = ts.find((x) => tolerates(x, t));
    if (!first) return -Infinity;
    used.push(first);
  }
  let at: number | undefined;
  for (const u of used) {
    if (u.seconds === undefined) continue;
    for (const t of noExecute) if (t.addedAt !== undefined && tolerates(u, t)) at = Math.min(at ?? Infinity, t.addedAt + u.seconds * 1000);
  }
  return at;
}
