import type http from 'node:http';
import { ApiError, statusMessage, type ApiClient } from './apiClient.js';
import { collectionPath, type KindSpec } from './kinds.js';
import { ZonekeeperError } from '../common/errors.js';
import { pageText } from './podPages.js';
import type { ByteLimit } from './responseLimits.js';

// The API server's side of a reflector: a kind's list pages and its watch stream.

/** What a reflector lists and watches one kind through (client-go's ListerWatcher). */
export interface ListerWatcher {
  /** One page of the list: `continueToken` from the previous page, '' for the first; a page past `bytes` is TooLarge. */
  list(limit: number, continueToken: string, signal: AbortSignal, bytes?: ByteLimit): Promise<ListPage>;
  /** A watch stream from `resourceVersion`; the caller reads and destroys it. */
  watch(resourceVersion: string, timeoutSeconds: number, signal: AbortSignal): Promise<http.IncomingMessage>;
}

/** A list page as received: text, or the bytes (decoded where the page is parsed). */
export interface ListPage { status: number; body: string | Uint8Array }

/** A list page asked for: its answer, and a way to stop waiting for it. */
export interface PageRequest { answer: Promise<ListPage>; cancel(): void }

/** A kind's collection on the API server. */
export function apiListerWatcher(api: ApiClient, kind: KindSpec): ListerWatcher {
  const base = collectionPath(kind);
  return {
    list(limit, continueToken, signal, bytes) {
      const q = new URLSearchParams({ limit: String(limit) });
      if (kind.fieldSelector) q.set('fieldSelector', kind.fieldSelector);
      if (continueToken) q.set('continue', continueToken);
      return api.requestBytes('GET', `${base}?${q}`, { signal, timeoutMs: 60_000, limit: bytes });
    },
    watch(resourceVersion, timeoutSeconds, signal) {
      const q = new URLSearchParams({ watch: '1', allowWatchBookmarks: 'true', resourceVersion, timeoutSeconds: String(timeoutSeconds) });
      if (kind.fieldSelector) q.set('fieldSelector', kind.fieldSelector);
      return api.stream(`${base}?${q}`, signal);
    },
  };
}

/** 410 Gone: the list starts over (an expired continue token, or a watch too far behind). */
export class Gone extends ZonekeeperError {}

/** A list page's failure: 410 Gone starts the list over (an expired continue token). */
export function listError(kind: string, res: ListPage): Error {
  if (res.status === 410) return new Gone('continue token expired');
  return new ApiError(res.status, `list ${kind}: ${res.status} ${statusMessage(pageText(res.body))}`);
}

/** How far into a page its ListMeta is looked for. */
const HEAD = 4096;

/**
 * The continue token of a list page, read from the text before its items (the API server
 * writes ListMeta first), so the next page can be asked for while this one is parsed.
 * Undefined when the head does not say; the parsed page always decides.
 */
export function continueAhead(body: string | Uint8Array): string | undefined {
  const length = Math.min(body.length, HEAD);
  const head = typeof body === 'string' ? body.slice(0, length) : Buffer.from(body.buffer, body.byteOffset, length).toString('latin1');
  const items = head.indexOf('"items"');
  return items < 0 ? undefined : /"continue":"([^"\\]+)"/.exec(head.slice(0, items))?.[1];
}
