import type { Logger } from 'pino';
import type { ApiClient } from './apiClient.js';
import { Reflector, type ReflectorOptions, type ReflectorStatus, type RestartReason } from './reflector.js';
import { CORE_KINDS, WORKLOADSPREAD_GROUP, WORKLOADSPREAD_VERSIONS, workloadSpreadKind } from './kinds.js';
import { ClusterStore } from './store.js';
import type { ClusterSourceStatus, SnapshotSource } from './source.js';

export interface WatchCacheOptions extends ReflectorOptions {
  /** How often an absent WorkloadSpread CRD is looked for again. */
  crdRecheckSeconds: number;
}

/**
 * Reflectors for every kind the policies read, plus the WorkloadSpread CRD when the
 * API server serves it. An absent CRD is looked for again periodically; it is not an error.
 */
export function watchCache(
  api: ApiClient, opts: WatchCacheOptions, log: Logger,
  onRestart?: (kind: string, reason: RestartReason) => void,
): SnapshotSource {
  const store = new ClusterStore();
  const reflectors = CORE_KINDS.map((r) => new Reflector(api, r, store, opts, log, onRestart));
  let spread: Reflector | undefined;
  let crd: ClusterSourceStatus['workloadSpreadCRD'] = 'unknown';
  let crdTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let loggedAbsent = false;
  // A failed discovery is retried with the reflectors' backoff, not at the slow recheck pace:
  // readiness waits on it, and the API may be back within a second.
  let discoveryBackoff = opts.backoffInitialMs;

  async function servedVersion(): Promise<string | undefined> {
    const res = await api.request('GET', `/apis/${WORKLOADSPREAD_GROUP}`, { timeoutMs: 10_000 });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`discovery of ${WORKLOADSPREAD_GROUP}: ${res.status}`);
    const served = new Set<string>((JSON.parse(res.body).versions ?? []).map((v: { version: string }) => v.version));
    for (const version of WORKLOADSPREAD_VERSIONS) {
      if (!served.has(version)) continue;
      const list = await api.request('GET', `/apis/${WORKLOADSPREAD_GROUP}/${version}`, { timeoutMs: 10_000 });
      if (list.status !== 200) continue;
      const resources: { name: string }[] = JSON.parse(list.body).resources ?? [];
      if (resources.some((r) => r.name === 'workloadspreads')) return version;
    }
    return undefined;
  }

  async function discover(): Promise<void> {
    let next = opts.crdRecheckSeconds * 1000;
    try {
      const version = await servedVersion();
      if (stopped) return;
      if (version && spread?.resource.version !== version) {
        await spread?.stop();
        spread = new Reflector(api, workloadSpreadKind(version), store, opts, log, onRestart);
        spread.start();
        crd = 'present';
        loggedAbsent = false;
        log.info({ version: `${WORKLOADSPREAD_GROUP}/${version}` }, 'watching WorkloadSpreads');
      } else if (!version) {
        if (spread) {
          await spread.stop();
          for (const key of store.keys('workloadspreads')) store.delete('workloadspreads', key);
          spread = undefined;
        }
        crd = 'absent';
        if (!loggedAbsent) log.info('WorkloadSpread CRD not served; looking again periodically');
        loggedAbsent = true;
      }
      discoveryBackoff = opts.backoffInitialMs;
    } catch (err) {
      next = discoveryBackoff;
      discoveryBackoff = Math.min(discoveryBackoff * 2, opts.backoffMaxMs);
      log.warn({ err: (err as Error).message, retryMs: next }, 'WorkloadSpread discovery failed; retrying');
    }
    if (!stopped) {
      crdTimer = setTimeout(discover, next);
      crdTimer.unref();
    }
  }

  const all = () => (spread ? [...reflectors, spread] : reflectors);

  return {
    snapshot: store,
    store,
    writable: true,
    describe: () => `kube-apiserver ${api.server}`,
    start() {
      for (const r of reflectors) r.start();
      void discover();
    },
    async stop() {
      stopped = true;
      clearTimeout(crdTimer);
      await Promise.all(all().map((r) => r.stop()));
    },
    synced: () => crd !== 'unknown' && all().every((r) => r.status().synced),
    ready: (now = Date.now()) => crd !== 'unknown' && all().every((r) => r.healthy(now)),
    status(now = Date.now()): ClusterSourceStatus {
      const kinds: ReflectorStatus[] = all().map((r) => r.status());
      return {
        source: `kube-apiserver ${api.server}`,
        synced: crd !== 'unknown' && kinds.every((k) => k.synced),
        healthy: crd !== 'unknown' && all().every((r) => r.healthy(now)),
        workloadSpreadCRD: crd,
        kinds: kinds.map((k) => ({ ...k, objects: store.count(k.kind as never) })),
      };
    },
  };
}
