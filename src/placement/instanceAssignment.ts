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
export function idOf(a: Assignment, pod: string): number {
  for (const [id, name] of a) if (name === pod) return id;
  return -1;
}

export type IdChoice =
  | { kind: 'held'; id: number }
  | { kind: 'new'; id: number; assignment: Assignment; pruned: string[] }
  | { kind: 'full'; reason: string };

/**
 * Reuses the pod's ID; else takes the lowest free ID below `replicas`; when none is free,
 * first drops entries of pods that are gone (`live` says which still exist).
 */
export function chooseInstanceId(current: Assignment, pod: string, replicas: number, live: (pod: string) => boolean): IdChoice {
  const held = idOf(current, pod);
  if (held >= 0) return { kind: 'held', id: held };
  const assignment: Assignment = new Map(current);
  const free = () => {
    for (let id = 0; id < replicas; id++) if (!assignment.has(id)) return id;
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
  if (id < 0) return { kind: 'full', reason: `all ${replicas} instance IDs are held by live pods` };
  assignment.set(id, pod);
  return { kind: 'new', id, assignment, pruned };
}

/** Bytes of all annotations as Kubernetes counts them: keys plus values. */
export function annotationBytes(annotations: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(annotations)) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}
