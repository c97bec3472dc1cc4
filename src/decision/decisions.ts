import { LRUCache } from 'lru-cache';
import { clipReason } from '../placement/policy.js';
import type { FilterVerdict } from '../placement/verdict.js';

const SAMPLE = 20;

/** One decision about a pod, by the transport's verb that asked, kept for /debug/decisions. */
export interface DecisionRecord {
  at: string;
  verb: 'filter' | 'prioritize' | 'preempt' | 'explain' | 'gate' | 'admission' | 'eviction';
  /** The extender's verbs: how kube-scheduler sent the nodes. */
  mode?: 'NodeNames' | 'Nodes';
  pod: string;
  uid: string;
  outcome: string;
  policy: string;
  workload: string | undefined;
  summary: string;
  nodes: number;
  passed: { count: number; sample: string[] };
  /** Rejected nodes grouped by reason: a 5,000-node decision stays small. */
  rejected: { rule: string; reason: string; unresolvable: boolean; count: number; sample: string[] }[];
  /** The first candidates' scores, in the order sent. */
  scores?: { node: string; score: number }[];
  error?: string;
}

export function summarizeRejections(verdict: FilterVerdict, sample = SAMPLE): DecisionRecord['rejected'] {
  return [...verdict.rejected].map(([r, names]) => ({
    rule: r.rule, reason: clipReason(r.reason), unresolvable: r.unresolvable, count: names.length, sample: names.slice(0, sample),
  }));
}

/** About what a decision costs to keep: its strings plus a fixed overhead per object. */
export function decisionBytes(d: DecisionRecord): number {
  let n = 200 + d.pod.length + d.uid.length + d.summary.length + (d.workload?.length ?? 0) + (d.error?.length ?? 0);
  for (const s of d.passed.sample) n += s.length + 16;
  for (const r of d.rejected) {
    n += 64 + r.reason.length;
    for (const s of r.sample) n += s.length + 16;
  }
  if (d.scores) for (const s of d.scores) n += s.node.length + 40;
  return n;
}

/** The last few decisions per pod, for the pods seen most recently; bounded in bytes too. */
export class DecisionLog {
  private readonly byPod: LRUCache<string, DecisionRecord[]>;

  constructor(pods: number, private readonly perPod: number, maxBytes = 32 * 1024 * 1024) {
    this.byPod = new LRUCache({
      max: pods, maxSize: maxBytes,
      sizeCalculation: (list) => list.reduce((n, d) => n + decisionBytes(d), 64),
    });
  }

  record(d: DecisionRecord): void {
    const list = this.byPod.get(d.pod) ?? [];
    list.push(d);
    if (list.length > this.perPod) list.splice(0, list.length - this.perPod);
    this.byPod.set(d.pod, list);
  }

  forPod(pod: string): DecisionRecord[] {
    return this.byPod.get(pod) ?? [];
  }
}
