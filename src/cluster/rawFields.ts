// Reading fields of raw JSON whose shape is not trusted: a wrong type reads as absent.

export type Raw = Record<string, any>;

export function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

// Repeated strings (namespaces, node names, owner names) are shared, not copied per pod. The
// table is bounded in bytes: a long string is never kept in it (one unique value per pod would
// pin it after the pod is gone), and past the bound the table starts again.
const interned = new Map<string, string>();
/** Longer strings are not interned: names are at most 253 characters; anything longer is a value of one object. */
const INTERN_MAX_LENGTH = 512;
/** The table's bound: two bytes per UTF-16 code unit. */
const INTERN_MAX_BYTES = 16 * 1024 * 1024;
let internedBytes = 0;
export function intern(s: string): string {
  if (s.length > INTERN_MAX_LENGTH) return s;
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (interned.size >= 200_000 || internedBytes + 2 * s.length > INTERN_MAX_BYTES) {
    interned.clear();
    internedBytes = 0;
  }
  interned.set(s, s);
  internedBytes += 2 * s.length;
  return s;
}

/** The bytes of strings the intern table holds (what retained memory it adds, for the memory test and /debug). */
export function internTableBytes(): number {
  return internedBytes;
}
