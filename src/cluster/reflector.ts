import type { Logger } from 'pino';
import { ApiError, statusMessage } from './apiClient.js';
import { slimOf } from './convert.js';
import type { KindName, KindSpec } from './kinds.js';
import { continueAhead, Gone, listError, type ListerWatcher, type ListPage, type PageRequest } from './listerWatcher.js';
import { backoff as backoffOf, sleepOn, systemClock, type Timers } from '../common/clock.js';
import { DEFAULT_RESPONSE_LIMITS } from '../common/config.js';
import { ZonekeeperError } from '../common/errors.js';
import { releaseAfterLargeBody } from '../common/memory.js';
import { inlinePages, type DecodedPage, type PageDecoder } from './podPages.js';
import { LineCutter, readStart, TooLarge, type ByteLimit } from './responseLimits.js';

/** What a reflector writes to: objects of its kind by key (client-go's Store). */
export interface ReflectorStore {
  keyOf(kind: KindName, obj: unknown): string;
  upsert(kind: KindName, obj: unknown): void;
  delete(kind: KindName, key: string): void;
  keys(kind: KindName): Iterable<string>;
  /** A kind only a feature needs is refused or not served (`why`), or works again (undefined). */
  setKindOff?(kind: KindName, why: string | undefined): void;
}

export interface ReflectorOptions {
  /** Items a list page asks for at first; halved for each page past `listPageMaxBytes`. */
  pageSize: number;
  /** The most one list page, and one watch event, may be (cluster.listPageMaxBytes, cluster.watchEventMaxBytes). */
  listPageMaxBytes?: number;
  watchEventMaxBytes?: number;
  /** Asked of the API server; a healthy server ends the watch after this long. */
  watchTimeoutSeconds: number;
  /** No byte for this long on an open watch: the watch is stalled, relist. */
  silenceSeconds: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Failing for this long without a working watch: the kind is stale, decisions wait. */
  maxStalenessSeconds: number;
  /**
   * Shared by the reflectors of one API server: an API server that cannot be reached is said
   * once for all of them, not by each kind at each retry; `reached` says it is back.
   */
  outage?: { unreachable(err: Error): boolean; reached(): void };
}

/** error: the API answered wrongly or not at all; decode: the stream was corrupt (an event lost, so relist). */
export type RestartReason = 'error' | 'gone' | 'stale' | 'decode';

/** A watch that streams this long without an error is working again: it ends a failure streak. */
const PROVEN_AFTER_MS = 1000;

export interface ReflectorStatus {
  kind: string;
  apiVersion: string;
  required: boolean;
  synced: boolean;
  watching: boolean;
  resourceVersion: string;
  lastContactAt: number;
  restarts: Record<RestartReason, number>;
  lastError: string;
  /** The HTTP status of the last failure (0: none, or not an HTTP answer). */
  lastErrorStatus: number;
  /** Since when every attempt has failed (ms); 0 while the watch works. */
  failingSince: number;
  /** A kind only a feature needs, refused or not served: the feature that is off, and why. */
  off?: string;
}

class Stalled extends ZonekeeperError {}
class Corrupt extends ZonekeeperError {}

interface WatchEvent { type?: string; object?: any }

/** One line of a watch stream; a line that is not an event object means the stream is corrupt. */
function decode(line: string, kind: string): WatchEvent {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch (err) {
    throw new Corrupt(`watch ${kind}: malformed event: ${(err as Error).message}`);
  }
  if (!event || typeof event !== 'object' || Array.isArray(event)) throw new Corrupt(`watch ${kind}: an event line that is not an object`);
  return event as WatchEvent;
}

/** At most this many pages of one list are decoding at once (the decoder thread never waits for the next). */
const PAGES_DECODING = 3;

/** How much of a failed watch's answer is read for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * List, then watch from the list's resourceVersion; relist on 410 Gone and when the
 * watch goes silent; back off after errors. A small, typed client-go reflector.
 */
export class Reflector {
  private stopped = false;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private state: ReflectorStatus;
  /** The feature this kind serves was said to be off (logged once until it works again). */
  private announcedOff = false;
  private readonly slim: (raw: any) => unknown;
  private readonly decodePage: PageDecoder;
  /** Items a list page asks for now: `opts.pageSize`, halved after each page too large. */
  private pageSize: number;
  private readonly pageLimit: ByteLimit;
  private readonly eventLimit: ByteLimit;

  constructor(
    private readonly lw: ListerWatcher,
    readonly resource: KindSpec,
    private readonly store: ReflectorStore,
    private readonly opts: ReflectorOptions,
    private readonly log: Logger,
    private readonly onRestart: (kind: string, reason: RestartReason) => void = () => {},
    private readonly clock: Timers = systemClock,
    decodePage?: PageDecoder,
  ) {
    this.slim = resource.slim ?? slimOf(resource);
    this.decodePage = decodePage ?? inlinePages(this.slim);
    this.pageSize = opts.pageSize;
    this.pageLimit = { bytes: opts.listPageMaxBytes ?? DEFAULT_RESPONSE_LIMITS.listPageMaxBytes, setting: 'cluster.listPageMaxBytes' };
    this.eventLimit = { bytes: opts.watchEventMaxBytes ?? DEFAULT_RESPONSE_LIMITS.watchEventMaxBytes, setting: 'cluster.watchEventMaxBytes' };
    this.state = {
      kind: resource.plural,
      apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version,
      required: resource.required,
      synced: false, watching: false, resourceVersion: '', lastContactAt: 0,
      restarts: { error: 0, gone: 0, stale: 0, decode: 0 }, lastError: '', lastErrorStatus: 0, failingSince: 0,
    };
  }

  status(): ReflectorStatus {
    const off = this.off();
    return { ...this.state, restarts: { ...this.state.restarts }, ...(off ? { off } : {}) };
  }

  /**
   * Synced once, in contact with the API server recently or watching now, and not failing
   * for longer than the staleness allowed: a watch that breaks on every attempt (a corrupt
   * stream, errors on every reconnect) is stale even while relists succeed in between.
   */
  healthy(now = this.clock.now()): boolean {
    const s = this.state;
    if (!s.synced) return false;
    if (s.failingSince && now - s.failingSince >= this.opts.maxStalenessSeconds * 1000) return false;
    return s.watching || now - s.lastContactAt < this.opts.silenceSeconds * 1000;
  }

  /** Failing because the API server refuses this kind to us (RBAC), not because it is away. */
  forbidden(): boolean {
    return this.state.failingSince !== 0 && this.state.lastErrorStatus === 403;
  }

  /**
   * For a kind only a feature needs: why that feature is off (the kind is refused or not
   * served), else undefined. Readiness does not wait for such a kind.
   */
  off(): string | undefined {
    const { failingSince, lastErrorStatus } = this.state;
    if (!this.resource.feature || failingSince === 0 || (lastErrorStatus !== 403 && lastErrorStatus !== 404)) return undefined;
    const group = this.resource.group ? `${this.resource.group}/` : '';
    const why = lastErrorStatus === 403 ? `zonekeeper may not list ${group}${this.resource.resource} (grant list and watch: manifests/base/10-rbac.yaml)` : `the API server does not serve ${group}${this.resource.resource}`;
    return `${this.resource.feature} are off: ${why}`;
  }

  private failed(now = this.clock.now()): void {
    if (!this.state.failingSince) this.state.failingSince = now;
  }

  /** The watch works again: valid events arrive, or it has streamed for a while. */
  private working(): void {
    this.opts.outage?.reached();
    if (this.announcedOff) {
      this.log.info({ kind: this.resource.plural }, `${this.resource.feature} are on again`);
      this.store.setKindOff?.(this.resource.plural, undefined);
    }
    this.announcedOff = false;
    this.state.failingSince = 0;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    let needList = true;
    const wait = backoffOf(this.opts.backoffInitialMs, this.opts.backoffMaxMs);
    while (!this.stopped) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        const began = this.clock.now();
        await this.watch();
        // A watch the server ends at once, again and again, must not spin.
        if (this.clock.now() - began < 1000) await sleepOn(this.clock, wait.next(), this.abort.signal);
        else wait.reset();
      } catch (err) {
        this.state.watching = false;
        if (this.stopped) break;
        const reason: RestartReason = err instanceof Gone ? 'gone' : err instanceof Stalled ? 'stale' : err instanceof Corrupt ? 'decode' : 'error';
        this.state.restarts[reason]++;
        this.state.lastError = (err as Error).message;
        this.state.lastErrorStatus = err instanceof ApiError ? err.status : 0;
        this.onRestart(this.resource.plural, reason);
        // 410 is the API server's ordinary way to say "relist"; everything else is a failure.
        if (reason !== 'gone') this.failed();
        if (reason === 'gone' || reason === 'stale') {
          this.log.info({ kind: this.resource.plural, reason }, 'relisting');
          needList = true;
          continue;
        }
        // A corrupt stream, or an event too large to read, lost an event: relist, but after the backoff, not in a hot loop.
        if (reason === 'decode' || err instanceof TooLarge) needList = true;
        const off = this.off();
        const unanswered = !(err instanceof ApiError) && !(err instanceof TooLarge) && this.opts.outage !== undefined;
        // A feature switched off, or an API server away, is said once, not at every retry; it is retried all the same.
        if (unanswered && !this.opts.outage!.unreachable(err as Error)) this.log.debug({ kind: this.resource.plural, err: (err as Error).message }, 'API server still not reached, retrying');
        else if (unanswered) this.log.warn({ err: (err as Error).message, backoffMaxMs: this.opts.backoffMaxMs }, 'cannot reach the API server; retrying every kind with backoff (said once until it answers)');
        else if (off && this.announcedOff) this.log.debug({ kind: this.resource.plural, err: (err as Error).message }, 'still refused, retrying');
        else if (off) this.log.warn({ kind: this.resource.plural, err: (err as Error).message }, `${off}; ready without it, retrying`);
        else this.log.warn({ kind: this.resource.plural, err: (err as Error).message, backoffMs: wait.peek(), relist: needList }, 'watch failed, retrying');
        if (off !== undefined && !this.announcedOff) this.store.setKindOff?.(this.resource.plural, off);
        this.announcedOff = off !== undefined;
        await sleepOn(this.clock, wait.next(), this.abort.signal);
      }
    }
    this.state.watching = false;
  }

  private async list(): Promise<void> {
    const kind = this.resource.plural;
    // The first list (nothing of the kind held): each page goes to the store as it is decoded.
    const held = [...this.store.keys(kind)];
    const items: unknown[] = [];
    let rv = '';
    let bytes = 0;
    let listed = 0;
    const take = (page: DecodedPage) => {
      listed += page.items.length;
      if (held.length === 0) for (const obj of page.items) this.store.upsert(kind, obj);
      else for (const obj of page.items) items.push(obj);
      rv = page.resourceVersion;
    };
    let page: PageRequest | undefined = this.page('');
    // Pages received and decoding, oldest first, each with the token read from its head by
    // which the page after it was asked for. The oldest's parse decides: pages asked for by a
    // wrong guess are dropped unread, and a page's error only counts once the guess is proven.
    const decoding: { page: Promise<DecodedPage>; guess: string }[] = [];
    try {
      for (;;) {
        if (page && decoding.length < PAGES_DECODING) {
          const res: ListPage = await page.answer.catch((err: unknown) => { throw this.smallerPages(err); });
          bytes += res.body.length;
          const guess: string = res.status === 200 ? continueAhead(res.body) ?? '' : '';
          // This page decodes (off the event loop for pods; its bytes move there) while older ones go to the store.
          const decoded = res.status === 200 ? this.decodePage(res.body) : Promise.reject(listError(kind, res));
          decoded.catch(() => {});
          decoding.push({ page: decoded, guess });
          // Ask for the next page while this one decodes: the API server prepares it meanwhile.
          page = guess ? this.page(guess) : undefined;
          continue;
        }
        const oldest = decoding.shift();
        if (!oldest) break;
        const decoded = await oldest.page;
        take(decoded);
        if (decoded.continue !== oldest.guess) {
          decoding.length = 0;
          page?.cancel();
          page = decoded.continue ? this.page(decoded.continue) : undefined;
        }
      }
    } finally {
      page?.cancel();
    }
    if (held.length > 0) this.replace(items, held);
    this.state.resourceVersion = rv;
    this.state.synced = true;
    this.state.lastContactAt = this.clock.now();
    this.log.debug({ kind, count: listed, resourceVersion: rv }, 'listed');
    // Pages were parsed and slimmed: their text and the raw objects are garbage now.
    releaseAfterLargeBody(bytes);
  }

  /** A page past its byte limit: every later list of this reflector asks for half as many items a page (at least one). */
  private smallerPages(err: unknown): unknown {
    if (!(err instanceof TooLarge)) return err;
    const kind = this.resource.plural;
    const was = this.pageSize;
    this.pageSize = Math.max(1, Math.floor(was / 2));
    if (was === 1) return new TooLarge(err.limit, `list ${kind}: one object`, '; raise the limit');
    return new TooLarge(err.limit, `list ${kind}: a page of ${was}`, `; relisting ${this.pageSize} a page (cluster.listPageSize ${this.opts.pageSize} is where it starts)`);
  }

  /** One page's request, cancellable on its own (a prefetched page that is not wanted). */
  private page(continueToken: string): PageRequest {
    const own = new AbortController();
    const answer = this.lw.list(this.pageSize, continueToken, AbortSignal.any([this.abort.signal, own.signal]), this.pageLimit);
    // A cancelled page's rejection is expected: never unhandled.
    answer.catch(() => {});
    return { answer, cancel: () => own.abort() };
  }

  /** Makes the store hold exactly `items` (it held `held`): objects deleted while the watch was down go. */
  private replace(items: unknown[], held: readonly string[]): void {
    const kind = this.resource.plural;
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(this.store.keyOf(kind, obj));
      this.store.upsert(kind, obj);
    }
    for (const key of held) if (!seen.has(key)) this.store.delete(kind, key);
  }

  private async watch(): Promise<void> {
    const attempt = new AbortController();
    const onStop = () => attempt.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    let stalled = false;
    let watchdog: (() => void) | undefined;
    let proven: (() => void) | undefined;
    const arm = () => {
      watchdog?.();
      watchdog = this.clock.after(this.opts.silenceSeconds * 1000, () => { stalled = true; attempt.abort(); });
    };
    try {
      arm();
      const res = await this.lw.watch(this.state.resourceVersion, this.opts.watchTimeoutSeconds, attempt.signal);
      if (res.statusCode === 410) { res.destroy(); throw new Gone('410 on watch'); }
      if (res.statusCode !== 200) {
        const body = await readStart(res, ERROR_BODY_BYTES);
        throw new ApiError(res.statusCode ?? 0, `watch ${this.resource.plural}: ${res.statusCode} ${statusMessage(body)}`);
      }
      this.state.watching = true;
      this.state.lastContactAt = this.clock.now();
      proven = this.clock.after(PROVEN_AFTER_MS, () => this.working());
      const lines = new LineCutter(this.eventLimit, `watch ${this.resource.plural}: an event`);
      const take = (line: string) => { if (line.trim()) this.apply(decode(line, this.resource.plural)); };
      for await (const chunk of res as AsyncIterable<Buffer>) {
        arm();
        this.state.lastContactAt = this.clock.now();
        lines.push(chunk, take);
      }
      take(lines.rest());
    } catch (err) {
      // Nothing more is read of this watch (an event too large, a corrupt one): its socket goes.
      attempt.abort();
      if (stalled) throw new Stalled(`no event for ${this.opts.silenceSeconds}s`);
      throw err;
    } finally {
      watchdog?.();
      proven?.();
      this.abort.signal.removeEventListener('abort', onStop);
      this.state.watching = false;
    }
  }

  private apply(event: WatchEvent): void {
    const obj = event.object ?? {};
    const rv = obj.metadata?.resourceVersion;
    if (event.type !== 'ERROR' && event.type !== 'BOOKMARK' && (typeof obj.metadata !== 'object' || obj.metadata === null)) {
      throw new Corrupt(`watch ${this.resource.plural}: ${String(event.type).slice(0, 40)} event without an object`);
    }
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.store.upsert(this.resource.plural, this.slim(obj));
        break;
      case 'DELETED': {
        const slim = this.slim(obj);
        this.store.delete(this.resource.plural, this.store.keyOf(this.resource.plural, slim));
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR':
        if (obj.code === 410) throw new Gone(obj.message ?? 'resourceVersion too old');
        throw new ApiError(obj.code ?? 0, `watch ${this.resource.plural}: ${obj.message ?? 'error event'}`);
      default:
        throw new Corrupt(`watch ${this.resource.plural}: unknown event type ${String(event.type).slice(0, 40)}`);
    }
    if (typeof rv === 'string' && rv) this.state.resourceVersion = rv;
    this.working();
  }
}
