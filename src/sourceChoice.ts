import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { ApiClient } from './cluster/apiClient.js';
import { federationWatch, type FederationView } from './cluster/memberClusters.js';
import type { ReflectorOptions } from './cluster/reflector.js';
import { watchCache } from './cluster/watchCache.js';
import type { Config } from './common/config.js';
import { UnreadableFileError } from './common/errors.js';

// Where `serve` and `audit` find the cluster, and the watch cache over an API server.

export const DEMO_CLUSTER = fileURLToPath(new URL('../config/demo-cluster.yaml', import.meta.url));
/** The instant the demo's times are written as seen at: serving shifts them so that it is the start (ages as the file means them). */
export const DEMO_WRITTEN_AT = Date.parse('2026-01-01T00:00:00Z');
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export type SourceChoice =
  | { kind: 'snapshot'; path: string }
  | { kind: 'demo'; path: string; why: string }
  | { kind: 'kubeconfig'; path: string; from: string }
  | { kind: 'in-cluster' };

/**
 * Where the cluster comes from: --snapshot, --demo, --kubeconfig, $KUBECONFIG,
 * ~/.kube/config, in-cluster; the bundled demo cluster when none of these is found.
 */
export function chooseSource(
  opts: { snapshot?: string; demo?: boolean; kubeconfig?: string },
  env: NodeJS.ProcessEnv = process.env, home = homedir(), exists: (p: string) => boolean = existsSync,
): SourceChoice {
  if (opts.snapshot) return { kind: 'snapshot', path: opts.snapshot };
  if (opts.demo) return { kind: 'demo', path: DEMO_CLUSTER, why: '--demo' };
  if (opts.kubeconfig) {
    if (!exists(opts.kubeconfig)) throw new UnreadableFileError('--kubeconfig', opts.kubeconfig, Object.assign(new Error('ENOENT'), { code: 'ENOENT' }));
    return { kind: 'kubeconfig', path: opts.kubeconfig, from: '--kubeconfig' };
  }
  const fromEnv = (env.KUBECONFIG ?? '').split(':').find((p) => p && exists(p));
  if (fromEnv) return { kind: 'kubeconfig', path: fromEnv, from: '$KUBECONFIG' };
  const dflt = join(home, '.kube', 'config');
  if (exists(dflt)) return { kind: 'kubeconfig', path: dflt, from: '~/.kube/config' };
  if (env.KUBERNETES_SERVICE_HOST && exists(IN_CLUSTER_TOKEN)) return { kind: 'in-cluster' };
  return { kind: 'demo', path: DEMO_CLUSTER, why: 'no kubeconfig and not in a cluster' };
}

/** A reflector's options from the cluster options of zonekeeper.yaml. */
function reflectorOptions(c: Config['cluster']): ReflectorOptions {
  return {
    pageSize: c.listPageSize, watchTimeoutSeconds: c.watchTimeoutSeconds, silenceSeconds: c.watchSilenceSeconds,
    backoffInitialMs: c.backoffInitialMs, backoffMaxMs: c.backoffMaxMs, maxStalenessSeconds: c.maxStalenessSeconds,
    listPageMaxBytes: c.listPageMaxBytes, watchEventMaxBytes: c.watchEventMaxBytes,
  };
}

/** The watch cache over an API server, with the cluster options of zonekeeper.yaml. */
export function clusterWatch(api: ApiClient, c: Config['cluster'], log: Logger, onRestart: (kind: string, reason: string) => void) {
  return watchCache(api, { ...reflectorOptions(c), crdRecheckSeconds: c.crdRecheckSeconds }, log, onRestart);
}

/** A Karmada control plane and its members watched (`zonekeeper karmada`, `audit --karmada`): a member is stale after karmada.memberStalenessSeconds. */
export function federationWatchOf(api: ApiClient, config: Config, log: Logger): FederationView {
  const { memberStalenessSeconds, memberAccess } = config.karmada;
  return federationWatch(api, { ...reflectorOptions(config.cluster), maxStalenessSeconds: memberStalenessSeconds, memberAccess }, log);
}
