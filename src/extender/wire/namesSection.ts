// The NodeNames array of a filter or prioritize body (kube-scheduler writes it last), taken
// apart from the rest: prioritize's names are recognized as the filter's answer by one
// comparison, and short names are split natively, not by JSON.parse
// (docs/performance.md#why-the-code-is-shaped-this-way).

/** Names a filter answered with and their JSON text: `"a","b"`, as encoding.ts writes known names. */
export interface AnsweredNames {
  names: readonly string[];
  text: string;
}

/** A body taken apart at its trailing NodeNames: `rest` has `[]` in its place, `section` is what was between. */
export interface NamesSplit {
  rest: string;
  section: string;
}

const KEY = '"NodeNames":[';
const CLOSE = ']}';
/** Strings without escapes or control characters, comma-separated, as Go's encoder writes names. */
const PLAIN = /^"[^"\\\u0000-\u001f]*"(?:,"[^"\\\u0000-\u001f]*")*$/;
/** The longest string value JSON.parse internalizes (V8). */
const INTERNALIZED_MAX = 10;

const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * When `body` ends with `,"NodeNames":[<section>]}` (or `{` first), the body with `[]` in the
 * array's place, and the section; else undefined. If `rest` parses at all, the key is the
 * body's top-level NodeNames: after `,` or `{` a quote is no escaped one, so the key opens
 * outside any string, and its object closes at the last brace (the last of duplicates is the
 * one JSON.parse keeps). So when the section is plain strings (no quote inside one), the body
 * parses to `rest`'s object with the section's names in NodeNames.
 */
export function splitNodeNames(body: string): NamesSplit | undefined {
  let end = body.length;
  while (end > 0 && isJsonSpace(body.charCodeAt(end - 1))) end--;
  if (!body.startsWith(CLOSE, end - CLOSE.length)) return undefined;
  const at = body.lastIndexOf(KEY, end - CLOSE.length - KEY.length);
  if (at < 1) return undefined;
  const before = body.charCodeAt(at - 1);
  if (before !== 0x2c && before !== 0x7b) return undefined;
  return { rest: `${body.slice(0, at)}${KEY}${CLOSE}`, section: body.slice(at + KEY.length, end - CLOSE.length) };
}

/** What `sectionNames` read: `count` is how many names the section holds, `names` at most `maxNames + 1` of them. */
export interface SectionNames {
  names: readonly string[];
  /** Validated already (a filter's answer). */
  checked: boolean;
  count: number;
}

/**
 * The section's names without JSON.parse: a filter's answer as it was written (`checked`:
 * they were validated then), or plain strings split natively when they are short enough for
 * JSON.parse to internalize. Undefined: leave them to JSON.parse. At most `maxNames + 1` names
 * are taken apart, and the plain-strings pattern only runs over that many: a section of more
 * (a hostile body near the size limit) is counted without allocating, and the pattern's
 * backtracking overflowed the stack at about 3 million names.
 */
export function sectionNames(section: string, answered: Iterable<AnsweredNames>, maxNames = Infinity): SectionNames | undefined {
  for (const a of answered) if (a.text === section) return { names: a.names, checked: true, count: a.names.length };
  if (section.length === 0) return { names: [], checked: false, count: 0 };
  const first = section.indexOf('"', 1);
  if (first < 0 || first - 1 > INTERNALIZED_MAX) return undefined;
  const limit = Math.min(maxNames + 1, 2 ** 32 - 1);
  const names = section.slice(1, -1).split('","', limit);
  if (names.length < limit) return isPlain(section) ? { names, checked: false, count: names.length } : undefined;
  const count = plainCount(section);
  return count === undefined ? undefined : { names, checked: false, count };
}

/** PLAIN's verdict; a stack overflow in its backtracking (millions of names, no bound given) is no verdict. */
function isPlain(section: string): boolean {
  try {
    return PLAIN.test(section);
  } catch {
    return false;
  }
}

const SPECIAL = /[\\\u0000-\u001f]/;

/**
 * How many strings a section holds if it is plain, without a pattern or an allocation: every
 * quote in it belongs to the outer pair or to a `","` separator. Linear in the section, for
 * the rare section of more names than the cluster allows.
 */
function plainCount(section: string): number | undefined {
  if (section.length < 2 || section[0] !== '"' || section[section.length - 1] !== '"' || SPECIAL.test(section)) return undefined;
  let separators = 0, quotes = 0;
  for (let at = section.indexOf('","', 1); at >= 0 && at <= section.length - 4; at = section.indexOf('","', at + 3)) separators++;
  for (let at = section.indexOf('"'); at >= 0; at = section.indexOf('"', at + 1)) quotes++;
  return quotes === 2 * separators + 2 ? separators + 1 : undefined;
}
