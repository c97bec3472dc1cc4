import type http from 'node:http';
import { ZonekeeperError } from '../common/errors.js';

// What is read from the API server or a member, bounded in bytes (docs/security.md#memory): a
// body or a watch event past its limit stops the read there, closes the connection and says
// which setting the limit is.

/** A byte limit on one read, and the setting it comes from. */
export interface ByteLimit { bytes: number; setting: string }

/** Bytes as an operator writes them: 32 MiB, 64 KiB, 1000 bytes. */
function byteSize(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** A response or a watch event larger than its limit: nothing more of it was read. */
export class TooLarge extends ZonekeeperError {
  constructor(readonly limit: ByteLimit, what: string, advice = '') {
    super(`${what} is larger than ${limit.setting} (${byteSize(limit.bytes)}): not read further, the connection closed${advice}`);
  }
}

/** The whole body, or TooLarge once its declared length or the bytes read pass the limit: the socket is then destroyed. */
export async function readWithin(res: http.IncomingMessage, limit: ByteLimit, what: string): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (declared > limit.bytes) {
    res.destroy();
    throw new TooLarge(limit, `${what} (${declared} bytes announced)`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit.bytes) {
      res.destroy();
      throw new TooLarge(limit, what);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** At most `bytes` of a body as text (an error's Status); the rest is not read: the socket is destroyed. */
export async function readStart(res: http.IncomingMessage, bytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= bytes) {
      res.destroy();
      break;
    }
  }
  return Buffer.concat(chunks, size).toString('utf8', 0, Math.min(size, bytes));
}

/**
 * A stream's bytes cut into lines (a watch: one event a line), each at most `limit.bytes`: a
 * longer one throws TooLarge as soon as it is, before it is all held. UTF-8 never has a newline
 * byte inside a character, so lines are cut on bytes and decoded whole.
 */
export class LineCutter {
  private parts: Buffer[] = [];
  private held = 0;

  constructor(private readonly limit: ByteLimit, private readonly what: string) {}

  /** Calls `line` with each line `chunk` completes. */
  push(chunk: Buffer, line: (text: string) => void): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      this.within(nl - from);
      const text = this.held === 0 ? chunk.toString('utf8', from, nl) : Buffer.concat([...this.parts, chunk.subarray(from, nl)]).toString('utf8');
      this.parts = [];
      this.held = 0;
      from = nl + 1;
      line(text);
    }
    if (from < chunk.length) {
      this.within(chunk.length - from);
      this.parts.push(chunk.subarray(from));
      this.held += chunk.length - from;
    }
  }

  /** The text after the last newline. */
  rest(): string {
    return Buffer.concat(this.parts, this.held).toString('utf8');
  }

  private within(more: number): void {
    if (this.held + more > this.limit.bytes) throw new TooLarge(this.limit, this.what);
  }
}
