import type { NodeSelectorRequirement, NodeSelectorTerm, SlimNode, Taint, Toleration, TopologySelectorTerm } from '../cluster/objects.js';

// Node selector semantics as in k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

const INTEGER = /^[+-]?\d{1,19}$/;

export function matchRequirement(r: NodeSelectorRequirement, value: string | undefined): boolean {
  switch (r.operator) {
    case 'In': return value !== undefined && (r.valueSet?.has(value) ?? r.values.includes(value));
    case 'NotIn': return value === undefined || !(r.valueSet?.has(value) ?? r.values.includes(value));
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': case 'Lt': {
      // Both sides must be whole numbers, as Go's strconv.ParseInt reads them ("1.5" matches nothing).
      if (value === undefined || r.values.length !== 1 || !INTEGER.test(value) || !INTEGER.test(r.values[0]!)) return false;
      const have = BigInt(value), want = BigInt(r.values[0]!);
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default: return false;
  }
}

/** All requirements of one term hold. An empty term matches nothing, as in Kubernetes. */
export function matchesTerm(term: NodeSelectorTerm, node: SlimNode): boolean {
  if (term.matchExpressions.length === 0 && term.matchFields.length === 0) return false;
  return term.matchExpressions.every((r) => matchRequirement(r, node.labels[r.key]))
    && term.matchFields.every((r) => matchRequirement(r, r.key === 'metadata.name' ? node.name : undefined));
}

/** Terms are ORed. */
export function matchesAnyTerm(terms: readonly NodeSelectorTerm[], node: SlimNode): boolean {
  return terms.some((t) => matchesTerm(t, node));
}

export function matchesTopology(terms: TopologySelectorTerm[], node: SlimNode): boolean {
  return terms.some((t) => t.matchLabelExpressions.every((e) => {
    const v = node.labels[e.key];
    return v !== undefined && e.values.includes(v);
  }));
}

export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && t.value === taint.value;
}

/**
 * Tolerations indexed by key, built once per pod: a node's few taints are then checked
 * against the tolerations of their own key (and the key-less ones), not against all of a
 * pod's tolerations for every node of the request.
 */
export function tolerator(tolerations: readonly Toleration[]): (node: SlimNode) => boolean {
  const byKey = new Map<string, Toleration[]>();
  const anyKey: Toleration[] = [];
  for (const t of tolerations) {
    if (!t.key) anyKey.push(t);
    else (byKey.get(t.key) ?? byKey.set(t.key, []).get(t.key)!).push(t);
  }
  const tolerated = (taint: Taint) => anyKey.some((t) => tolerates(t, taint)) || (byKey.get(taint.key) ?? []).some((t) => tolerates(t, taint));
  return (node) => node.taints.every(tolerated);
}

/** Every NoSchedule/NoExecute taint of the node is tolerated. */
export function toleratesNode(tolerations: readonly Toleration[], node: SlimNode): boolean {
  return tolerator(tolerations)(node);
}
