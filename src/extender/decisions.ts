import { LRUCache } from 'lru-cache';
import type { FilterVerdict } from '../placement/verdict.js';

const SAMPLE = 20;

/** One filter or prioritize answer, kept for /debug/decisions. */
export interface Decision {
  at: string;
  verb: 'filter' | 'prioritize' | 'explain';
  mode: 'NodeNames' | 'Nodes';
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
  scores?: Record<string, number>;
  error?: string;
}

export function summarizeRejections(verdict: FilterVerdict, sample = SAMPLE): Decision['rejected'] {
  return [...verdict.rejected].map(([r, names]) => ({
    rule: r.rule, reason: r.reason, unresolvable: r.unresolvable, count: names.length, sample: names.slice(0, sample),
  }));
}

/** The last few decisions per pod, for the pods seen most recently. */
export class DecisionLog {
  private readonly byPod: LRUCache<string, Decision[]>;

  constructor(pods: number, private readonly perPod: number) {
    this.byPod = new LRUCache({ max: pods });
  }

  record(d: Decision): void {
    const list = this.byPod.get(d.pod) ?? [];
    list.push(d);
    if (list.length > this.perPod) list.splice(0, list.length - this.perPod);
    this.byPod.set(d.pod, list);
  }

  forPod(pod: string): Decision[] {
    return this.byPod.get(pod) ?? [];
  }
}
