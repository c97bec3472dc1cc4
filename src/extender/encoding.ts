import { clipReason, type Candidates, type FilterVerdict } from '../placement/verdict.js';
import type { RawObject } from './protocol.js';

// ExtenderFilterResult written straight to JSON text. At 5,000 names a pinned pod rejects
// thousands of nodes that share one reason: each group of names becomes one native join
// around the encoded reason, instead of an object with thousands of keys to stringify.

/** Characters that JSON must escape. Names of known nodes never have them (Kubernetes names are DNS subdomains); a request may. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029]/;

/** `"a"<sep>"b"<sep>"c"`. `known`: names of nodes the cache or the request's Node objects have, which need no escaping. */
function quotedJoin(names: readonly string[], sep: string, known: boolean): string {
  if (names.length === 0) return '';
  if (known || !NEEDS_ESCAPE.test(names.join(''))) return `"${names.join(`"${sep}"`)}"`;
  return names.map((n) => JSON.stringify(n)).join(sep);
}

function entries(names: readonly string[], reason: string, known: boolean): string {
  const value = `:${JSON.stringify(clipReason(reason))}`;
  return names.length === 0 ? '' : quotedJoin(names, `${value},`, known) + value;
}

export interface EncodeOptions {
  /** Also list unresolvable nodes in FailedNodes, for kube-scheduler < 1.21. */
  legacyFailedNodes: boolean;
}

export function encodeFilterResult(verdict: FilterVerdict, nodeItems: RawObject[] | undefined, o: EncodeOptions): string {
  const failed: string[] = [];
  const unresolvable: string[] = [];
  for (const [r, names] of verdict.rejected) {
    const e = entries(names, r.reason, !r.unknownNames);
    if (r.unresolvable) unresolvable.push(e);
    if (!r.unresolvable || o.legacyFailedNodes) failed.push(e);
  }
  const maps = `"FailedNodes":{${failed.join(',')}},"FailedAndUnresolvableNodes":{${unresolvable.join(',')}},"Error":""`;
  if (!nodeItems) return `{"Nodes":null,"NodeNames":[${quotedJoin(verdict.passed, ',', !verdict.passedUnknown)}],${maps}}`;
  const keep = new Set(verdict.passed);
  const items = nodeItems.filter((n) => keep.has(n.metadata.name));
  return `{"Nodes":{"items":${JSON.stringify(items)}},"NodeNames":null,${maps}}`;
}

export function encodeError(message: string): string {
  return JSON.stringify({ Nodes: null, NodeNames: null, FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: message });
}

const SCORE_SUFFIX = Array.from({ length: 11 }, (_, score) => `","Score":${score}}`);

/**
 * The HostPriorityList: `[{"Host": name, "Score": n}]`, as text for the same reason as the
 * filter result; built by concatenation, which V8 keeps as a rope until it is written.
 */
export function encodePriorities(candidates: Candidates, scores: readonly number[]): string {
  const { names, nodes } = candidates;
  let out = '[';
  for (let i = 0; i < names.length; i++) {
    if (i > 0) out += ',';
    const score = scores[i] ?? 0;
    const suffix = SCORE_SUFFIX[score];
    out += nodes[i] && suffix ? '{"Host":"' + names[i] + suffix : `{"Host":${JSON.stringify(names[i])},"Score":${score}}`;
  }
  return out + ']';
}
