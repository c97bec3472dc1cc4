// A JSON List file (`kubectl get -o json`) parsed a slice of items at a time: each slice's raw
// objects die young, where one JSON.parse of the whole file kept them all alive at once (the
// collector copied them twice) and needed a string of the whole file beside its bytes.

/** Bytes of items per slice: large enough that the cuts cost nothing, small enough to die young. */
export const SLICE_BYTES = 1 << 20;

/** How many cuts in the whole file may prove to be inside an item before it is parsed whole. */
const MISSED_CUTS = 8;

const OPEN = 0x7b, CLOSE = 0x7d, COMMA = 0x2c, COLON = 0x3a, QUOTE = 0x22, BACKSLASH = 0x5c;
const ITEM_START = Buffer.from('"apiVersion"');
const KIND = Buffer.from('"kind"');
const METADATA = Buffer.from('"metadata"');

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const skipBlanks = (buf: Buffer, i: number) => {
  while (isSpace(buf[i])) i++;
  return i;
};
const startsWith = (buf: Buffer, i: number, word: Buffer) => i + word.length <= buf.length && buf.compare(word, 0, word.length, i, i + word.length) === 0;

/** After a `"key"` at `i` whose value is a string without escapes: the index past the value, else -1. */
function stringField(buf: Buffer, i: number, key: Buffer): number {
  if (!startsWith(buf, i, key)) return -1;
  i = skipBlanks(buf, i + key.length);
  if (buf[i] !== COLON) return -1;
  i = skipBlanks(buf, i + 1);
  if (buf[i] !== QUOTE) return -1;
  for (i++; i < buf.length; i++) {
    if (buf[i] === QUOTE) return i + 1;
    if (buf[i] === BACKSLASH) return -1;
  }
  return -1;
}

/** Whether an object's fields at `i` begin `"apiVersion": "…", "kind": "…", "metadata"`, as kubectl prints every object. */
function looksLikeItem(buf: Buffer, i: number): boolean {
  i = stringField(buf, i, ITEM_START);
  if (i < 0 || buf[(i = skipBlanks(buf, i))] !== COMMA) return false;
  i = stringField(buf, skipBlanks(buf, i + 1), KIND);
  if (i < 0 || buf[(i = skipBlanks(buf, i))] !== COMMA) return false;
  return startsWith(buf, skipBlanks(buf, i + 1), METADATA);
}

/**
 * The first comma at or after `from` of a `}` `,` `{` `"apiVersion": "…", "kind": "…",
 * "metadata"` (blanks allowed between), or -1. Every such comma is outside a string: the quote
 * before `apiVersion` follows `{` or a blank, so it is not escaped, and a letter after it means
 * it opens a string rather than closing one. Owner references and managed fields, which also
 * begin with `apiVersion`, do not have `kind` then `metadata`; whether a cut sits between
 * items or deeper, only parsing the slice tells.
 */
export function nextCut(bytes: Uint8Array, from: number): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = buf.indexOf(ITEM_START, from); at >= 0; at = buf.indexOf(ITEM_START, at + 1)) {
    let i = at - 1;
    while (isSpace(buf[i])) i--;
    if (buf[i] !== OPEN) continue;
    i--;
    while (isSpace(buf[i])) i--;
    if (buf[i] !== COMMA) continue;
    const comma = i;
    i--;
    while (isSpace(buf[i])) i--;
    if (buf[i] === CLOSE && comma >= from && looksLikeItem(buf, at)) return comma;
  }
  return -1;
}

const parseOr = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The frame of the List around its items: its other fields, from the first and the last slice. */
export interface ListFrame { kind: unknown }

/**
 * The text from `from` to the first cut at or after `reach` at which `wrap` of it parses, and
 * that cut: end -1 when no cut is left, value undefined when the file's budget of missed cuts
 * ran out (each miss parses the slice again).
 */
function parseToCut(buf: Buffer, from: number, reach: number, wrap: (text: string) => string, missed: { count: number }): { value: unknown; end: number } {
  for (let end = nextCut(buf, reach); end >= 0; end = nextCut(buf, end + 1)) {
    const value = parseOr(wrap(buf.toString('utf8', from, end)));
    if (value !== undefined) return { value, end };
    if (++missed.count > MISSED_CUTS) return { value: undefined, end };
  }
  return { value: undefined, end: -1 };
}

/**
 * Calls `take` with each slice's items in file order and returns the List's frame, or
 * undefined when the bytes are not one JSON object whose last field before the first cut is
 * `items` (an array), or a slice does not parse: the caller then parses the file whole, having
 * discarded what `take` was given. A slice is a run of whole items only if it parses once
 * bracketed, and the first starts right after `"items":[`; so, slice by slice, every cut is
 * proven to lie between two items of that array before anything after it is read.
 */
export function forEachListSlice(bytes: Uint8Array, take: (items: unknown[]) => void, sliceBytes = SLICE_BYTES): ListFrame | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf[skipBlanks(buf, 0)] !== OPEN) return undefined;
  const missed = { count: 0 };
  const first = parseToCut(buf, 0, sliceBytes, (text) => `${text}]}`, missed);
  const head = first.value;
  if (first.end < 0 || !isRecord(head)) return undefined;
  const fields = Object.keys(head);
  const items = head[fields[fields.length - 1]!];
  if (fields[fields.length - 1] !== 'items' || !Array.isArray(items)) return undefined;
  take(items);
  for (let cut = first.end; ;) {
    const next = parseToCut(buf, cut + 1, cut + 1 + sliceBytes, (text) => `[${text}]`, missed);
    if (next.end < 0) {
      // The rest: the last items, then the List's closing fields.
      const tail = parseOr(`{"items":[${buf.toString('utf8', cut + 1, buf.length)}`);
      if (!isRecord(tail) || !Array.isArray(tail.items)) return undefined;
      take(tail.items);
      return { kind: 'kind' in tail ? tail.kind : head.kind };
    }
    if (!Array.isArray(next.value)) return undefined;
    take(next.value);
    cut = next.end;
  }
}
