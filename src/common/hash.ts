// The two stable string hashes: the same in every replica and every release.

/** FNV-1a 32-bit: fleet balance's start zone for lists that are never frozen. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** FNV-1 32-bit over UTF-8 (Go's hash/fnv New32): the Federated ReplicaSet planner's tie-break, as upstream. */
export function fnv1_32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash = (hash ^ byte) >>> 0;
  }
  return hash;
}
