import http from 'node:http';
import https from 'node:https';
import { DEFAULT_RESPONSE_LIMITS } from '../common/config.js';
import { ZonekeeperError } from '../common/errors.js';
import type { ClusterAccess } from './kubeconfig.js';
import { readWithin, type ByteLimit } from './responseLimits.js';

/**
 * A small HTTP client for the Kubernetes API, with the credentials of `ClusterAccess`
 * (kubeconfig.ts); requests are plain node:http so that list pages and watch streams are
 * under our control (timeouts, aborts, the staleness watchdog).
 */
export interface ApiClient {
  readonly server: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse>;
  /** As `request`, the body left as the bytes received (list pages, decoded on another thread). */
  requestBytes(method: string, path: string, opts?: RequestOptions): Promise<{ status: number; body: Buffer }>;
  /** Opens a streaming GET (a watch); the caller reads and destroys the response. */
  stream(path: string, signal: AbortSignal): Promise<http.IncomingMessage>;
}

interface ApiResponse { status: number; body: string }

/** `limit`: the most of the answer read (a list page's); else the client's `responseMaxBytes`. */
interface RequestOptions { body?: string; contentType?: string; signal?: AbortSignal; timeoutMs?: number; limit?: ByteLimit }

export class ApiError extends ZonekeeperError {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** `responseMaxBytes`: the most of any answer read, a list page's and a watch's aside (cluster.responseMaxBytes). */
export function kubeApiClient(cluster: ClusterAccess, limits: { responseMaxBytes: number } = DEFAULT_RESPONSE_LIMITS): ApiClient {
  const base = new URL(cluster.server);
  const answerLimit: ByteLimit = { bytes: limits.responseMaxBytes, setting: 'cluster.responseMaxBytes' };
  const secure = base.protocol === 'https:';
  let agent: http.Agent | undefined;

  async function options(method: string, path: string): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: {} };
    await cluster.apply(opts);
    // One keep-alive agent for every request, built from the first set of TLS options.
    if (!agent) {
      agent = secure
        ? new https.Agent({ keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: !cluster.skipTLSVerify,
            servername: cluster.tlsServerName })
        : new http.Agent({ keepAlive: true });
    }
    const url = new URL(base.pathname.replace(/\/$/, '') + path, base);
    return {
      method, agent, headers: { ...opts.headers, accept: 'application/json' }, auth: opts.auth,
      protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname + url.search,
    };
  }

  function open(opts: https.RequestOptions, body: string | undefined, signal?: AbortSignal): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request({ ...opts, signal }, resolve);
      req.on('error', reject);
      if (body !== undefined) req.end(body);
      else req.end();
    });
  }

  async function requestBytes(method: string, path: string, o: RequestOptions = {}) {
    const opts = await options(method, path);
    if (o.contentType) (opts.headers as Record<string, string>)['content-type'] = o.contentType;
    const signal = o.timeoutMs ? AbortSignal.any([AbortSignal.timeout(o.timeoutMs), ...(o.signal ? [o.signal] : [])]) : o.signal;
    const res = await open(opts, o.body, signal);
    const body = await readWithin(res, o.limit ?? answerLimit, `the answer to ${method} ${path.split('?')[0]}`);
    return { status: res.statusCode ?? 0, body };
  }

  return {
    server: cluster.server,
    requestBytes,
    async request(method, path, o) {
      const res = await requestBytes(method, path, o);
      return { status: res.status, body: res.body.toString('utf8') };
    },
    async stream(path, signal) {
      return open(await options('GET', path), undefined, signal);
    },
  };
}

/** Reads the `message` of a Kubernetes Status body, or the start of any other body. */
export function statusMessage(body: string): string {
  try {
    const s = JSON.parse(body);
    if (typeof s?.message === 'string') return s.message;
  } catch { /* not JSON */ }
  return body.slice(0, 200);
}
