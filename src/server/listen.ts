import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { parseConfig, splitHostPort } from '../common/config.js';
import { systemClock, type Timers } from '../common/clock.js';
import { ZonekeeperError } from '../common/errors.js';
import { guardConnections, type ConnectionHooks, type HttpLimits } from './connectionGuard.js';

interface TlsFiles { certFile: string; keyFile: string; clientCAFile: string }

/** TLS whose certificate arrives later and may change (admission.certificate): served once `useCertificate` gives one; a client CA from a file. */
interface ManagedTls { managed: true; clientCAFile?: string }

/** The defaults of config `http`: a listener opened without limits (tests, benches) has them too. */
const DEFAULT_HTTP_LIMITS: HttpLimits = parseConfig({}).http;

export interface Listener {
  url: string;
  port: number;
  /**
   * Stops accepting, lets in-flight requests finish, and drops what is left at `deadline`
   * (ms since the epoch): listeners closed together share one deadline.
   */
  close(deadline: number): Promise<void>;
  /** A TLS listener: new connections are served `cert` from now on (a renewal); connections open keep theirs. */
  useCertificate(cert: string, key: string): void;
}

/** Serves a hono app on HOST:PORT; TLS when cert and key are set (config refuses half of it), mutual TLS with a client CA. */
interface ListenOptions extends ConnectionHooks {
  tls?: TlsFiles | ManagedTls;
  limits?: HttpLimits;
  /** TLS files changed and are served from now on, or could not be read again (the old ones stay). */
  onTlsReload?: (err?: Error) => void;
  clock?: Timers;
  /** What the listener is and where it is set (LISTENER_SETTINGS): a failure to listen names them. */
  setting?: { name: string; key: string; flag: string };
}

/** A listener that could not open its port, in one line naming it and how to move it. */
export class ListenError extends ZonekeeperError {}

/** Why a port could not be opened, in a user's words. */
function listenFailure(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE': return 'the port is in use (another process, or another zonekeeper, listens there)';
    case 'EACCES': return 'permission denied (ports below 1024 need privileges)';
    case 'EADDRNOTAVAIL': return 'no interface of this machine has that address';
    default: return err.message;
  }
}

/** TLS files are read again this often: cert-manager renews a mounted Secret's files in place. */
export const TLS_RELOAD_MS = 60_000;

export async function listen(app: Hono, hostPort: string, o: ListenOptions = {}): Promise<Listener> {
  const { host, port } = splitHostPort(hostPort);
  const { tls } = o;
  const limits = o.limits ?? DEFAULT_HTTP_LIMITS;
  const files = tls && !('managed' in tls) && tls.certFile && tls.keyFile ? tls : undefined;
  const secure = !!files || !!(tls && 'managed' in tls);
  const read = files && tlsPaths(files).map((f) => readFileSync(f, 'utf8'));
  // A managed certificate's client CA is a file too (the operator's, not zonekeeper's Secret).
  const managedCa = tls && 'managed' in tls && tls.clientCAFile ? readFileSync(tls.clientCAFile, 'utf8') : undefined;
  const clientCa = read ? read[2] : managedCa;
  const mutual = clientCa === undefined ? {} : { ca: clientCa, requestCert: true, rejectUnauthorized: true };
  const clock = o.clock ?? systemClock;
  // Node's own timers run on real time: beside the system clock they back up the guard's; beside an injected one (tests) the guard alone decides.
  const real = clock === systemClock;
  const server = (secure
    ? createAdaptorServer({
        fetch: app.fetch,
        createServer: https.createServer,
        // Managed: no certificate until useCertificate (a handshake before it fails, and the caller's failure policy decides).
        serverOptions: { ...(read ? { cert: read[0], key: read[1] } : {}), ...mutual, ...(real ? { handshakeTimeout: limits.handshakeTimeoutMs } : {}) },
      })
    : createAdaptorServer({ fetch: app.fetch })) as http.Server;
  server.headersTimeout = real ? limits.headersTimeoutMs : 0;
  server.requestTimeout = real ? limits.requestTimeoutMs : 0;
  server.keepAliveTimeout = real ? limits.keepAliveTimeoutMs : 0;
  // The caps are the guard's alone (it may displace a socket; Node's maxConnections only refuses).
  guardConnections(server, secure, limits, clock, o);
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const s = o.setting;
      reject(s ? new ListenError(`the ${s.name} listener cannot listen on ${hostPort}: ${listenFailure(err)}; choose another with ${s.flag} HOST:PORT (${s.key})`, { cause: err }) : err);
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const stopReloading = files && read ? reloadingFiles(server as unknown as https.Server, files, read, clock, o.onTlsReload) : () => {};
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${secure ? 'https' : 'http'}://${shownHost}:${actual}`,
    port: actual,
    useCertificate(cert, key) {
      if (!secure) throw new Error(`${hostPort} is not a TLS listener`);
      (server as unknown as https.Server).setSecureContext({ cert, key, ...(managedCa === undefined ? {} : { ca: managedCa }) });
    },
    close(deadline) {
      stopReloading();
      return new Promise((resolve) => {
        const force = clock.after(Math.max(0, deadline - clock.now()), () => server.closeAllConnections());
        server.close(() => {
          force();
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

/** Certificate, key, and the client CA when there is one. */
function tlsPaths(files: TlsFiles): string[] {
  return [files.certFile, files.keyFile, ...(files.clientCAFile ? [files.clientCAFile] : [])];
}

/** Reads the files every TLS_RELOAD_MS and serves them when they changed; a failed read keeps what is served. Returns the stop. */
function reloadingFiles(server: https.Server, files: TlsFiles, initial: string[], clock: Timers, report?: (err?: Error) => void): () => void {
  const paths = tlsPaths(files);
  let served = initial.join('\u0000');
  let cancel: (() => void) | undefined;
  const check = async () => {
    try {
      const [cert, key, ca] = await Promise.all(paths.map((f) => readFile(f, 'utf8')));
      const now = [cert, key, ...(ca === undefined ? [] : [ca])].join('\u0000');
      if (now !== served) {
        // A new context for new connections; the client CA goes with it (requestCert stays the server's).
        server.setSecureContext({ cert, key, ...(ca === undefined ? {} : { ca }) });
        served = now;
        report?.();
      }
    } catch (err) {
      report?.(err as Error);
    }
    if (cancel) cancel = clock.after(TLS_RELOAD_MS, () => void check());
  };
  cancel = clock.after(TLS_RELOAD_MS, () => void check());
  return () => {
    cancel?.();
    cancel = undefined;
  };
}
