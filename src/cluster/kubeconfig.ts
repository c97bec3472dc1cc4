import { readFileSync } from 'node:fs';
import type https from 'node:https';
import { isIPv6 } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { unreadableFile } from '../common/errors.js';
import { systemClock } from '../common/clock.js';

// Where the API server is and the credentials for it, from a kubeconfig or the pod's service
// account. Static credentials (tokens, token files, client certificates, basic auth) are read
// here; `@kubernetes/client-node` is loaded only for those it must run (exec plugins, auth
// providers): loading it costs every start ~0.6 s and the process ~57 MB (docs/performance.md).

export type ClusterSource = { kind: 'kubeconfig'; path: string } | { kind: 'in-cluster' };

export interface ClusterAccess {
  /** The API server's URL, without a trailing slash. */
  server: string;
  skipTLSVerify: boolean;
  tlsServerName?: string;
  /** Sets one request's TLS options and credentials (a token file is re-read after a minute). */
  apply(opts: https.RequestOptions): Promise<void>;
}

interface StaticUser {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  impersonate?: string;
  cert?: Buffer;
  key?: Buffer;
}

interface ClusterEntry { server: string; skipTLSVerify: boolean; tlsServerName?: string; ca?: Buffer }

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long a token read from a file is used before it is read again (client-go's period). */
const TOKEN_FILE_TTL_MS = 60_000;

/** The cluster of `source`; throws a clear error when the kubeconfig names nothing usable. */
export function loadClusterAccess(source: ClusterSource, env: NodeJS.ProcessEnv = process.env, now: () => number = systemClock.now): ClusterAccess {
  return source.kind === 'kubeconfig' ? fromKubeconfig(source.path, now) : inCluster(env, SERVICE_ACCOUNT, now);
}

/** The pod's service account: the API server from the environment, its CA and a token file kubelet rotates. */
export function inCluster(env: NodeJS.ProcessEnv, dir: string, now: () => number = systemClock.now): ClusterAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const cluster: ClusterEntry = { server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`, skipTLSVerify: false, ca: readFileSync(join(dir, 'ca.crt')) };
  return staticAccess(cluster, { tokenFile: join(dir, 'token') }, now);
}

function fromKubeconfig(path: string, now: () => number): ClusterAccess {
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // A file system error has an errno; YAML's errors have codes of their own.
    const why = e.errno === undefined ? `not valid YAML (${e.message.split('\n')[0]})` : unreadableFile(e);
    throw new Error(`kubeconfig ${path}: ${why}`);
  }
  const config = isRecord(doc) ? doc : {};
  const contextName = config['current-context'];
  if (typeof contextName !== 'string' || !contextName) throw new Error(`no current context in ${path}`);
  const context = named(config.contexts, contextName, 'context', path);
  if (!context) throw new Error(`no current cluster in ${path}: no context named ${contextName}`);
  const clusterName = context.cluster;
  if (typeof clusterName !== 'string') throw new Error(`no current cluster in ${path}: context ${contextName} names no cluster`);
  const entry = named(config.clusters, clusterName, 'cluster', path);
  if (!entry) throw new Error(`no current cluster in ${path}: no cluster named ${clusterName}`);
  if (typeof entry.server !== 'string' || !entry.server) throw new Error(`cluster ${clusterName} in ${path} has no server`);
  const root = dirname(path);
  const cluster: ClusterEntry = {
    server: entry.server.replace(/\/$/, ''), skipTLSVerify: entry['insecure-skip-tls-verify'] === true,
    tlsServerName: str(entry['tls-server-name']), ca: fileOrData(root, entry['certificate-authority'], entry['certificate-authority-data']),
  };
  const userName = context.user;
  const user = typeof userName === 'string' ? named(config.users, userName, 'user', path) ?? {} : {};
  if (user.exec !== undefined || user['auth-provider'] !== undefined) return clientNodeAccess(cluster, path);
  const tokenFile = str(user['token-file']);
  return staticAccess(cluster, {
    token: str(user.token), tokenFile: tokenFile && resolve(root, tokenFile),
    username: str(user.username), password: str(user.password), impersonate: str(user.as),
    cert: fileOrData(root, user['client-certificate'], user['client-certificate-data']),
    key: fileOrData(root, user['client-key'], user['client-key-data']),
  }, now);
}

function staticAccess(cluster: ClusterEntry, user: StaticUser, now: () => number): ClusterAccess {
  let fileToken: { value: string; readAt: number } | undefined;
  const token = (): string | undefined => {
    if (user.token) return user.token;
    if (!user.tokenFile) return undefined;
    if (!fileToken || now() - fileToken.readAt > TOKEN_FILE_TTL_MS) fileToken = { value: readFileSync(user.tokenFile, 'utf8').trim(), readAt: now() };
    return fileToken.value;
  };
  return {
    server: cluster.server, skipTLSVerify: cluster.skipTLSVerify, tlsServerName: cluster.tlsServerName,
    async apply(opts) {
      if (cluster.ca) opts.ca = cluster.ca;
      if (user.cert) opts.cert = user.cert;
      if (user.key) opts.key = user.key;
      if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
      if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
      const headers = (opts.headers ??= {}) as Record<string, string>;
      const bearer = token();
      if (bearer) headers.Authorization = `Bearer ${bearer}`;
      if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
      if (user.impersonate) headers['Impersonate-User'] = user.impersonate;
    },
  };
}

/** A member cluster as Karmada holds it: its endpoint and a bearer token; TLS verified with `ca`, else the system's roots. */
export function tokenAccess(server: string, token: string, ca: Buffer | undefined): ClusterAccess {
  return staticAccess({ server: server.replace(/\/$/, ''), skipTLSVerify: false, ...(ca ? { ca } : {}) }, { token }, systemClock.now);
}

/** Credentials a program must produce (exec plugins, auth providers): client-node's, loaded on first use. */
function clientNodeAccess(cluster: ClusterEntry, path: string): ClusterAccess {
  let kc: Promise<KubeConfig> | undefined;
  return {
    server: cluster.server, skipTLSVerify: cluster.skipTLSVerify, tlsServerName: cluster.tlsServerName,
    async apply(opts) {
      kc ??= import('@kubernetes/client-node').then(({ KubeConfig }) => {
        const config = new KubeConfig();
        config.loadFromFile(path);
        return config;
      });
      await (await kc).applyToHTTPSOptions(opts);
    },
  };
}

type Entry = Record<string, unknown>;
const isRecord = (v: unknown): v is Entry => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** `list`'s entry named `name` (`{name, <kind>: {...}}`), its inner object; undefined if absent. */
function named(list: unknown, name: string, kind: string, path: string): Entry | undefined {
  if (list !== undefined && list !== null && !Array.isArray(list)) throw new Error(`${path}: ${kind}s is not a list`);
  for (const item of list ?? []) {
    if (!isRecord(item) || item.name !== name) continue;
    const inner = item[kind];
    if (inner === undefined || inner === null) return {};
    if (!isRecord(inner)) throw new Error(`${path}: ${kind} ${name} is not a mapping`);
    return inner;
  }
  return undefined;
}

/** A file's bytes (relative to the kubeconfig's directory) or base64 data. */
function fileOrData(root: string, file: unknown, data: unknown): Buffer | undefined {
  const f = str(file);
  if (f) return readFileSync(resolve(root, f));
  const d = str(data);
  return d ? Buffer.from(d, 'base64') : undefined;
}
