import type http from 'node:http';
import type net from 'node:net';
import type { Timers } from '../common/clock.js';

// No client can hold a listener (docs/security.md#no-listener-can-be-held): every
// phase of a connection has a limit on the injected clock, sockets are capped per source and in
// all, and at the cap a source holding few sockets takes the place of one holding the most.

/** Limits of every listener (config `http`; the admission listener's caps from `admission`). */
export interface HttpLimits {
  /** The TLS handshake within this of the connection, or it is closed. */
  handshakeTimeoutMs: number;
  /** A request's headers within this of the connection being ready (TLS: its handshake done). */
  headersTimeoutMs: number;
  /** A request's body within this of its headers. */
  bodyTimeoutMs: number;
  /** A request, from its headers to its answer's last byte, within this. */
  requestTimeoutMs: number;
  /** The next request's headers within this of the last answer (an idle keep-alive connection). */
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Sockets one source address may hold at once; past it a new one is closed at once. */
  maxConnectionsPerSource: number;
}

/** Why the listener closed a connection (an idle keep-alive one, closed as HTTP allows, is not counted). */
export type DropReason = 'full' | 'source' | 'displaced' | 'handshake' | 'headers' | 'body' | 'request';

interface Connection {
  source: string;
  /** Its address and port, read once (a closed socket no longer has them). */
  endpoint: string;
  raw: net.Socket;
  /** The socket requests come on: the TLS socket once its handshake is done, else the raw one. */
  outer: net.Socket;
  /** Requests whose answer is not yet finished. */
  requests: Set<http.IncomingMessage>;
  /** Cancels the timer of the phase between requests (handshake, headers, idle). */
  waiting: () => void;
  closed: boolean;
}

const endpoint = (s: { remoteAddress?: string; remotePort?: number }) => `${s.remoteAddress}|${s.remotePort}`;

/** Whether closing `c` loses no work of zonekeeper's: it is not answering a request it has whole. */
const displaceable = (c: Connection) => c.requests.size === 0 || [...c.requests].some((r) => !r.complete);

/** Who hears of connections: each one admitted (TLS: once its handshake is done), and each one closed and why. */
export interface ConnectionHooks { onConnection?: () => void; onDrop?: (reason: DropReason) => void }

/** Guards `server`'s connections with `limits`. */
export function guardConnections(server: http.Server, secure: boolean, limits: HttpLimits, clock: Timers, hooks: ConnectionHooks = {}): void {
  const { onConnection, onDrop } = hooks;
  const bySource = new Map<string, Set<Connection>>();
  // Sockets still in their TLS handshake, by address and port (the TLS socket wraps the raw one: the same pair).
  const handshaking = new Map<string, Connection>();
  const byOuter = new WeakMap<net.Socket, Connection>();
  let open = 0;

  const forget = (c: Connection) => {
    if (c.closed) return;
    c.closed = true;
    c.waiting();
    open--;
    const held = bySource.get(c.source)!;
    held.delete(c);
    if (held.size === 0) bySource.delete(c.source);
    handshaking.delete(c.endpoint);
  };
  const close = (c: Connection, reason: DropReason | 'idle') => {
    if (c.closed) return;
    forget(c);
    c.outer.destroy();
    c.raw.destroy();
    if (reason !== 'idle') onDrop?.(reason);
  };
  const wait = (c: Connection, ms: number, reason: DropReason | 'idle') => {
    c.waiting();
    c.waiting = clock.after(ms, () => close(c, reason));
  };
  // The oldest displaceable socket of the source holding the most, if it holds at least two more than `held`.
  const victim = (held: number): Connection | undefined => {
    let found: Connection | undefined;
    let most = held + 1;
    for (const conns of bySource.values()) {
      if (conns.size <= most) continue;
      const c = [...conns].find(displaceable);
      if (c) {
        found = c;
        most = conns.size;
      }
    }
    return found;
  };

  server.on('connection', (raw: net.Socket) => {
    const source = raw.remoteAddress ?? '';
    const held = bySource.get(source)?.size ?? 0;
    const refuse = (reason: DropReason) => {
      raw.destroy();
      onDrop?.(reason);
    };
    if (held >= limits.maxConnectionsPerSource) return refuse('source');
    if (open >= limits.maxConnections) {
      const v = victim(held);
      if (!v) return refuse('full');
      close(v, 'displaced');
    }
    const c: Connection = { source, endpoint: endpoint(raw), raw, outer: raw, requests: new Set(), waiting: () => {}, closed: false };
    open++;
    if (!bySource.has(source)) bySource.set(source, new Set());
    bySource.get(source)!.add(c);
    if (secure) {
      handshaking.set(c.endpoint, c);
      wait(c, limits.handshakeTimeoutMs, 'handshake');
    } else {
      byOuter.set(raw, c);
      wait(c, limits.headersTimeoutMs, 'headers');
      onConnection?.();
    }
    raw.once('close', () => forget(c));
  });
  // Prepended: the phase is known before the HTTP parser (or the app) sees the socket or the request.
  if (secure) {
    server.prependListener('secureConnection', (tls: net.Socket) => {
      const k = endpoint(tls);
      const c = handshaking.get(k);
      if (!c) return;
      handshaking.delete(k);
      c.outer = tls;
      byOuter.set(tls, c);
      wait(c, limits.headersTimeoutMs, 'headers');
      onConnection?.();
    });
  }
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const c = byOuter.get(req.socket);
    if (!c || c.closed) return;
    c.waiting();
    c.requests.add(req);
    const body = clock.after(limits.bodyTimeoutMs, () => {
      if (!req.complete && c.requests.has(req)) close(c, 'body');
    });
    const whole = clock.after(limits.requestTimeoutMs, () => {
      if (c.requests.has(req)) close(c, 'request');
    });
    const answered = () => {
      body();
      whole();
      if (!c.requests.delete(req) || c.closed) return;
      if (c.requests.size === 0) wait(c, limits.keepAliveTimeoutMs, 'idle');
    };
    res.once('finish', answered);
    res.once('close', answered);
  });
}
