import { ANNOTATION } from '../cluster/annotations.js';
import { type SlimWorkload } from '../cluster/objects.js';

// Instance IDs for workloads without ordinals (docs/design.md#instance-ids, seed: CDAP): each pod takes a
// unique ID in [0, replicas), recorded as {"id": "pod"} on the owner.

/** Kubernetes caps all of an object's annotations together at 256 KiB. */
export const ANNOTATIONS_LIMIT = 256 * 1024;

export type Assignment = Map<number, string>;

export function optedIn(workload: SlimWorkload | undefined): boolean {
  return workload?.annotations[ANNOTATION.instanceIds] === 'true';
}

export function parseAssignment(value: string | undefined): Assignment {
  const out: Assignment = new Map();
  if (!value) return out;
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new Error(`${ANNOTATION.instanceAssignment} is not JSON`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${ANNOTATION.instanceAssignment} is not a JSON object`);
  for (const [k, v] of Object.entries(raw)) if (/^\d+$/.test(k) && typeof v === 'string') out.set(Number(k), v);
  return out;
}

export function serializeAssignment(a: Assignment): string {
  return JSON.stringify(Object.fromEntries([...a].sort((x, y) => x[0] - y[0]).map(([id, pod]) => [String(id), pod])));
}

/** The ID a pod already holds in the map, or -1. */
function idOf(a: Assignment, pod: string): number {
  for (const [id, name] of a) if (name === pod) return id;
  return -1;
}

export type IdChoice =
  | { kind: 'held'; id: number }
  | { kind: 'new'; id: number; assignment: Assignment; pruned: string[] }
  | { kind: 'full'; reason: string };

export interface ChoiceOptions {
  /** IDs live pods carry as their annotation (the cache's view): taken even where the map misses them (a ReplicaSet-era map). */
  held?: ReadonlyMap<number, string>;
  /** Free IDs kept for placed pods still waiting for one (idsForWaitingPods). */
  reserved?: ReadonlySet<number>;
  /** Taken when free: the ID whose zone the pod is already in. */
  prefer?: number;
}

/**
 * Reuses the pod's ID; else takes `prefer` or the lowest free ID below `replicas`; when none
 * is free, first drops entries of pods that are gone (`live` says which still exist).
 */
export function chooseInstanceId(current: Assignment, pod: string, replicas: number, live: (pod: string) => boolean, opts: ChoiceOptions = {}): IdChoice {
  const held = idOf(current, pod);
  if (held >= 0) return { kind: 'held', id: held };
  const assignment: Assignment = new Map(current);
  for (const [id, name] of opts.held ?? []) if (!assignment.has(id) && name !== pod) assignment.set(id, name);
  const isFree = (id: number) => id >= 0 && id < replicas && !assignment.has(id) && !opts.reserved?.has(id);
  const free = () => {
    if (opts.prefer !== undefined && isFree(opts.prefer)) return opts.prefer;
    for (let id = 0; id < replicas; id++) if (isFree(id)) return id;
    return -1;
  };
  const pruned: string[] = [];
  let id = free();
  if (id < 0) {
    for (const [k, name] of assignment) {
      if (!live(name)) {
        assignment.delete(k);
        pruned.push(name);
      }
    }
    id = free();
  }
  if (id < 0) return { kind: 'full', reason: `all ${replicas} instance IDs are held by live pods${opts.reserved?.size ? ` or kept for ${opts.reserved.size} placed pod(s) waiting for one` : ''}` };
  assignment.set(id, pod);
  return { kind: 'new', id, assignment, pruned };
}

/** A placed pod without an ID (a rollout's surge pod) and the zone it runs in. */
export interface WaitingPod {
  name: string;
  zone: string | undefined;
}

/**
 * Free IDs for placed pods without one (docs/design.md#instance-ids): first every pod whose
 * zone is a free ID's seat zone takes that ID, oldest first; then the rest take the lowest
 * free IDs left. A pod never takes the ID another waits for in its own zone.
 */
export function idsForWaitingPods(free: readonly number[], waiting: readonly WaitingPod[], zoneOfId: (id: number) => string | undefined): Map<string, number> {
  const left = [...free].sort((a, b) => a - b);
  const out = new Map<string, number>();
  for (const pod of waiting) {
    const i = pod.zone === undefined ? -1 : left.findIndex((id) => zoneOfId(id) === pod.zone);
    if (i >= 0) out.set(pod.name, left.splice(i, 1)[0]!);
  }
  for (const pod of waiting) {
    if (left.length === 0) break;
    if (!out.has(pod.name)) out.set(pod.name, left.shift()!);
  }
  return out;
}

/** Bytes of all annotations as Kubernetes counts them: keys plus values. */
export function annotationBytes(annotations: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(annotations)) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}
