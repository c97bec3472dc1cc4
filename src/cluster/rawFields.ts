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

// Repeated strings (namespaces, node names, owner names) are shared, not copied per pod.
const interned = new Map<string, string>();
export function intern(s: string): string {
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (interned.size > 200_000) interned.clear();
  interned.set(s, s);
  return s;
}
