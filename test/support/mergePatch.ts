/** RFC 7386 JSON merge patch, as the API server applies one: objects merge, null removes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
