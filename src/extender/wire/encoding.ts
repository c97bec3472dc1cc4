import { clipReason } from '../../placement/policy.js';
import type { FilterVerdict } from '../../placement/verdict.js';
import type { RawObject } from './validation.js';

// kube-scheduler's answers, written straight to JSON text. At 5,000 names a pinned pod rejects thousands of
// nodes that share one reason: each group of names becomes one native join around the encoded
// reason, instead of an object with thousands of keys to stringify.
//
// Every answer is ASCII: anything else is written as a \u escape, so the route turns the
// text into bytes as Latin-1, a plain copy, not a UTF-8 pass.

/** Characters written escaped: what JSON must escape, and everything outside ASCII. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u0080-\uffff]/;
const NON_ASCII = /[\u0080-\uffff]/;
const EVERY_NON_ASCII = /[\u0080-\uffff]/g;

const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON text of any value, in ASCII. */
function asciiJson(value: unknown): string {
  const text = JSON.stringify(value);
  return NON_ASCII.test(text) ? text.replace(EVERY_NON_ASCII, unicodeEscape) : text;
}

/** `"a"<sep>"b"<sep>"c"`. `known`: names of nodes the cache or the request's Node objects have: DNS subdomains, which need no escaping. */
function quotedJoin(names: readonly string[], sep: string, known: boolean): string {
  if (names.length === 0) return '';
  if (known || !NEEDS_ESCAPE.test(names.join(''))) return `"${names.join(`"${sep}"`)}"`;
  return names.map(asciiJson).join(sep);
}

/** A name list as JSON array members; `known`: names of known nodes, written as they are. */
export function quotedNames(names: readonly string[], known: boolean): string {
  return quotedJoin(names, ',', known);
}

function entries(names: readonly string[], reason: string, known: boolean): string {
  const value = `:${asciiJson(clipReason(reason))}`;
  return names.length === 0 ? '' : quotedJoin(names, `${value},`, known) + value;
}

export interface EncodeOptions {
  /** Also list unresolvable nodes in FailedNodes, for kube-scheduler < 1.21. */
  legacyFailedNodes: boolean;
  /** List rejected nodes even when some node passed. */
  reportRejectedWhenPlaced?: boolean;
}

/**
 * The ExtenderFilterResult. Rejected nodes and their reasons are listed when no node passed:
 * kube-scheduler reads them only when no node is left after every extender (the
 * "0/N nodes are available" message, and which nodes preemption may try). When some node
 * passes they would be read by nobody, yet were most of the answer for kube-scheduler to
 * decode on every pod: they are left out, and the decision log keeps them. A node left out counts as UnschedulableAndUnresolvable from 1.31;
 * before that a second extender rejecting every node zonekeeper passed could let preemption
 * try one: `reportRejectedWhenPlaced` lists them always. `passedText`: the passed names as
 * `quotedNames` wrote them already.
 */
export function encodeFilterResult(verdict: FilterVerdict, nodeItems: RawObject[] | undefined, o: EncodeOptions, passedText?: string): string {
  const failed: string[] = [];
  const unresolvable: string[] = [];
  const listRejected = verdict.passed.length === 0 || o.reportRejectedWhenPlaced === true;
  if (listRejected) for (const [r, names] of verdict.rejected) {
    const e = entries(names, r.reason, !r.unknownNames);
    if (r.unresolvable) unresolvable.push(e);
    if (!r.unresolvable || o.legacyFailedNodes) failed.push(e);
  }
  const maps = `"FailedNodes":{${failed.join(',')}},"FailedAndUnresolvableNodes":{${unresolvable.join(',')}},"Error":""`;
  if (!nodeItems) return `{"Nodes":null,"NodeNames":[${passedText ?? quotedNames(verdict.passed, !verdict.passedUnknown)}],${maps}}`;
  const keep = new Set(verdict.passed);
  const items = nodeItems.filter((n) => keep.has(n.metadata.name));
  return `{"Nodes":{"items":${asciiJson(items)}},"NodeNames":null,${maps}}`;
}

export function encodeError(message: string): string {
  return `{"Nodes":null,"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":${asciiJson(message)}}`;
}

/**
 * The HostPriorityList: `[{"Host": name, "Score": n}]`. kube-scheduler adds each listed
 * host's score to that node and nothing to a node not listed (1.20 as today), so a score of 0
 * is left out: an unmanaged pod's answer is `[]`, and a pinned pod's lists the nodes of its
 * zone only. One score for every node is `[]` too. Order carries nothing either: hosts are
 * written grouped by score, one native join per score. `known(i)`: names[i] is a known
 * node's name, which needs no escaping.
 */
export function encodePriorities(names: readonly string[], scores: readonly number[], known: (i: number) => boolean): string {
  // Scores are integers 1..10 here; anything else, and names no node has (rare), one by one.
  const byScore: string[][] = Array.from({ length: MAX_EXTENDER_SCORE + 1 }, () => []);
  const single: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const score = scores[i] ?? 0;
    if (score === 0) continue;
    const group = known(i) ? byScore[score] : undefined;
    if (group) group.push(names[i]!);
    else single.push(`{"Host":${asciiJson(names[i])},"Score":${asciiJson(score)}}`);
  }
  // Every node the same score: kube-scheduler adds the same to each, which ranks them as
  // adding nothing does, and `[]` spares it decoding a score per node (a pod in a zone that
  // holds none of its workload yet, the common case for small workloads).
  if (single.length === 0 && byScore.some((group) => group.length === names.length && names.length > 0)) return '[]';
  const parts: string[] = [];
  for (let score = 1; score <= MAX_EXTENDER_SCORE; score++) {
    const group = byScore[score]!;
    if (group.length > 0) parts.push(`{"Host":"${group.join(`","Score":${score}},{"Host":"`)}","Score":${score}}`);
  }
  if (single.length > 0) parts.push(single.join(','));
  return `[${parts.join(',')}]`;
}

/** extenderv1.MaxExtenderPriority. */
const MAX_EXTENDER_SCORE = 10;
