// Prioritize is sent the names the filter answered, in the same order and as the same JSON
// text (kube-scheduler maps the answer back to its nodes and sends them on). Recognizing that
// text with one comparison spares parsing and hashing its thousands of names a second time:
// kube-scheduler waits for both calls, and between pods its own work evicts them from the
// CPU's caches, so what a request touches, not what it computes, is what it costs.

/** Names a filter answered with and their JSON text: `"a","b"`, as encoding.ts writes known names. */
export interface AnsweredNames {
  names: readonly string[];
  text: string;
}

const KEY = '"NodeNames":[';
const CLOSE = ']}';

const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * When `body` ends with `,"NodeNames":[<answered.text>]}` (or `{` first), the body with `[]` in
 * place of those names; else undefined. Parsed, that text is the body's object with NodeNames
 * empty: after `,` or `{` a quote is no escaped one, so if the text parses at all the key
 * opens outside any string, and its object closes at the last brace: it is the top-level
 * NodeNames (the last of duplicates is the one JSON.parse keeps). The names between hold no
 * quote or escape (known nodes' names), so the body parses to that object with these names.
 */
export function withoutAnswered(body: string, answered: AnsweredNames): string | undefined {
  let end = body.length;
  while (end > 0 && isJsonSpace(body.charCodeAt(end - 1))) end--;
  const from = end - CLOSE.length - answered.text.length;
  const at = from - KEY.length;
  if (at < 1 || !body.startsWith(CLOSE, end - CLOSE.length) || !body.startsWith(KEY, at)) return undefined;
  const before = body.charCodeAt(at - 1);
  if (before !== 0x2c && before !== 0x7b) return undefined;
  if (!body.startsWith(answered.text, from)) return undefined;
  return `${body.slice(0, at)}${KEY}${CLOSE}`;
}
