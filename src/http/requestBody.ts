import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Context } from 'hono';
import { BadRequest, HttpError } from '../common/errors.js';

// Reading a request body within limits: its declared or streamed size, its media type, and
// its encoding. kube-scheduler sends plain application/json; a proxy in between may gzip.

/** 413: a body over the listener's limit. */
class PayloadTooLarge extends HttpError {
  constructor(limit?: number) {
    super(413, 'payload too large', limit === undefined ? 'the body is over the limit' : `the body is over the ${limit}-byte limit`, undefined, limit === undefined ? undefined : { limitBytes: limit });
  }
}

/** 415: a media type or content encoding the verbs do not read. */
class UnsupportedMedia extends HttpError {
  constructor(message: string) {
    super(415, 'unsupported media type', message);
  }
}

const gunzipLimited = promisify(gunzip) as (buf: Buffer, o: { maxOutputLength: number }) => Promise<Buffer>;

/** application/json, or any `+json` type; no Content-Type at all is read as JSON too. */
function checkJsonType(contentType: string | undefined): void {
  if (contentType === undefined || contentType.trim() === '') return;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return;
  throw new UnsupportedMedia(`Content-Type ${type.slice(0, 100)} is not JSON: send application/json`);
}

async function readBytes(c: Context, limit: number): Promise<Buffer> {
  const stream = c.req.raw.body;
  if (!stream) return Buffer.alloc(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new PayloadTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * The body as text, refusing more than `limit` bytes. A declared Content-Length over the
 * limit is refused before reading (Node's parser never reads past it); a chunked body is
 * counted as it arrives and abandoned at the limit. A gzip body is inflated on the thread
 * pool and may not inflate past the limit either: a small bomb is a 413, not an OOM.
 */
export async function readBody(c: Context, limit: number): Promise<string> {
  checkJsonType(c.req.header('content-type'));
  const declared = c.req.header('content-length');
  if (declared !== undefined) {
    const n = Number(declared);
    if (!Number.isSafeInteger(n) || n > limit) throw new PayloadTooLarge(limit);
  }
  const encoding = (c.req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return declared !== undefined ? c.req.text() : (await readBytes(c, limit)).toString('utf8');
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new UnsupportedMedia(`Content-Encoding ${encoding.slice(0, 100)} is not supported: send identity or gzip`);
  const packed = await readBytes(c, limit);
  try {
    return (await gunzipLimited(packed, { maxOutputLength: limit })).toString('utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new PayloadTooLarge(limit);
    throw new UnsupportedMedia(`the gzip body could not be inflated: ${(err as Error).message}`);
  }
}

/** A body's JSON; a BadRequest for an empty or malformed one. */
export function parseJson(text: string, what: string): unknown {
  if (!text.trim()) throw new BadRequest('(body)', `empty body: expected ${what} JSON`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadRequest('(body)', `malformed JSON: ${(err as Error).message}`);
  }
}
