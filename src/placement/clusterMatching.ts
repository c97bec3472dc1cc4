import type { SlimMemberCluster } from '../cluster/karmada.js';
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

/** A NoExecute taint the placement does not tolerate for good: Karmada's taint manager evicts from such a member (at once, or after tolerationSeconds). */
export function evictingTaint(ts: readonly ClusterToleration[], taints: readonly Taint[]): Taint | undefined {
  return taints.find((t) => t.effect === 'NoExecute' && !ts.some((x) => tolerates(x, t) && x.seconds === undefined));
}
