import type { Logger } from 'pino';
import type { ApiClient } from './apiClient.js';
import { backoff, systemClock, type Timers } from '../common/clock.js';
import { offThreadAvailable, offThreadPodPages } from './podPages.js';
import { apiListerWatcher } from './listerWatcher.js';
import { Reflector, type ReflectorOptions, type ReflectorStatus, type RestartReason } from './reflector.js';
import { collectionPath, CORE_KINDS, KRUISE_GROUP, OPTIONAL_KINDS, type KindName } from './kinds.js';
import { ClusterStore } from './store.js';
import type { ClusterSourceStatus, SnapshotSource } from './source.js';

export interface WatchCacheOptions extends ReflectorOptions {
  /** How often absent OpenKruise CRDs are looked for again. */
  crdRecheckSeconds: number;
  /** Time for every wait, watchdog and staleness of the cache (a fake one in tests). */
  clock?: Timers;
}

/** Per optional kind, the version served (discovery found it), or absent. */
type OptionalKindsServed = Partial<Record<KindName, string>>;

/**
 * The version of each optional kind the API server serves: one discovery of each group, then
 * of each version listed, preferred versions first. A 404 for the group: none served.
 */
async function servedVersions(api: ApiClient): Promise<OptionalKindsServed> {
  const out: OptionalKindsServed = {};
  for (const group of new Set(OPTIONAL_KINDS.map((k) => k.group))) {
    const res = await api.request('GET', `/apis/${group}`, { timeoutMs: 10_000 });
    if (res.status === 404) continue;
    if (res.status !== 200) throw new Error(`discovery of ${group}: ${res.status}`);
    const served = new Set<string>((JSON.parse(res.body).versions ?? []).map((v: { version: string }) => v.version));
    const resources = new Map<string, Set<string>>();
    for (const version of served) {
      const list = await api.request('GET', `/apis/${group}/${version}`, { timeoutMs: 10_000 });
      if (list.status !== 200) continue;
      resources.set(version, new Set((JSON.parse(list.body).resources ?? []).map((r: { name: string }) => r.name)));
    }
    for (const k of OPTIONAL_KINDS) {
      if (k.group !== group) continue;
      const version = k.versions.find((v) => resources.get(v)?.has(k.resource));
      if (version) out[k.plural] = version;
    }
  }
  return out;
}

/**
 * Reflectors for every kind the policies read, plus OpenKruise's kinds (WorkloadSpread,
 * CloneSet, Advanced StatefulSet) while the API server serves their CRDs. An absent CRD is
 * looked for again periodically; it is not an error.
 */
export function watchCache(
  api: ApiClient, opts: WatchCacheOptions, log: Logger,
  onRestart?: (kind: string, reason: RestartReason) => void,
): SnapshotSource {
  const store = new ClusterStore();
  const clock = opts.clock ?? systemClock;
  // An API server away is said once for every kind, and once more when it answers again.
  let away = false;
  opts = {
    ...opts,
    outage: {
      unreachable: () => !away && (away = true),
      reached: () => {
        if (away) log.info({ server: api.server }, 'the API server answers again');
        away = false;
      },
    },
  };
  // Pods are most of a cold sync's bytes: their pages are decoded off the event loop.
  const podPages = offThreadAvailable() ? offThreadPodPages() : undefined;
  const reflectors = CORE_KINDS.map((r) => new Reflector(apiListerWatcher(api, r), r, store, opts, log, onRestart, clock, r.plural === 'pods' ? podPages : undefined));
  const optional = new Map<KindName, Reflector>();
  let discovered = false;
  let crdTimer: (() => void) | undefined;
  let stopped = false;
  const loggedAbsent = new Set<KindName>();
  const forbidden = new Set<KindName>();
  // A failed discovery is retried with the reflectors' backoff, not at the slow recheck pace:
  // readiness waits on it, and the API may be back within a second.
  const discoveryBackoff = backoff(opts.backoffInitialMs, opts.backoffMaxMs);

  async function discover(): Promise<void> {
    let next = opts.crdRecheckSeconds * 1000;
    try {
      const served = await servedVersions(api);
      if (stopped) return;
      for (const k of OPTIONAL_KINDS) {
        const version = served[k.plural];
        const running = optional.get(k.plural);
        const refused = () => {
          if (!forbidden.has(k.plural)) log.warn({ kind: k.plural, version: `${k.group}/${version}` }, `forbidden to list ${k.group} ${k.resource}: grant list and watch (manifests/base/10-rbac.yaml); its pods wait meanwhile`);
          forbidden.add(k.plural);
          // Its pods' reason names the permission (placement/model.ts).
          store.setKindOff(k.plural, `${k.kind}s are off: zonekeeper may not list ${k.group}/${k.resource} (grant list and watch: manifests/base/10-rbac.yaml)`);
        };
        if (version && running?.forbidden()) {
          // Its RBAC was revoked while it was watched: as if forbidden from the start, so its
          // stale objects go (unless kept: KindSpec.keptWhenRefused) and the probe below brings it
          // back once granted again.
          await running.stop();
          optional.delete(k.plural);
          if (!k.keptWhenRefused) for (const key of store.keys(k.plural)) store.delete(k.plural, key);
          refused();
          continue;
        }
        if (version && running?.resource.version !== version) {
          // Served but not ours to read (a ClusterRole from before this kind was added): a
          // reflector would fail forever and hold readiness, so say so and look again later.
          const spec = k.at(version);
          const probe = await api.request('GET', `${collectionPath(spec)}?limit=1`, { timeoutMs: 10_000 });
          if (stopped) return;
          if (probe.status === 403) {
            refused();
            continue;
          }
          forbidden.delete(k.plural);
          store.setKindOff(k.plural, undefined);
          await running?.stop();
          const r = new Reflector(apiListerWatcher(api, spec), spec, store, opts, log, onRestart, clock);
          optional.set(k.plural, r);
          r.start();
          loggedAbsent.delete(k.plural);
          log.info({ kind: k.plural, version: `${k.group}/${version}` }, 'watching an optional kind (OpenKruise, Karpenter)');
        } else if (!version) {
          if (running) {
            await running.stop();
            optional.delete(k.plural);
            for (const key of store.keys(k.plural)) store.delete(k.plural, key);
          }
          if (!loggedAbsent.has(k.plural)) log.info({ kind: k.plural }, 'CRD not served; looking again periodically');
          loggedAbsent.add(k.plural);
        }
      }
      discovered = true;
      discoveryBackoff.reset();
    } catch (err) {
      next = discoveryBackoff.next();
      // While the API server is known to be away (said once by the reflectors), quietly.
      if (away) log.debug({ err: (err as Error).message, retryMs: next }, 'discovery of optional kinds failed; retrying');
      else log.warn({ err: (err as Error).message, retryMs: next }, 'discovery of optional kinds failed; retrying');
    }
    if (!stopped) {
      crdTimer = clock.after(next, () => void discover());
    }
  }

  const all = () => [...reflectors, ...optional.values()];
  // An optional kind refused to us is left out of readiness as soon as it fails (discovery
  // tidies it away on its next look): one revoked ClusterRole rule must not fail every filter.
  // ready() runs on every extender request: a walk, no arrays.
  const everyCounted = (check: (r: Reflector) => boolean): boolean => {
    // A kind only a feature needs (Jobs) is left out while refused or not served: the feature is off.
    for (const r of reflectors) if (!check(r) && r.off() === undefined) return false;
    for (const r of optional.values()) if (!r.forbidden() && !check(r)) return false;
    return true;
  };
  const synced = (r: Reflector) => r.status().synced;
  const crdState = (plural: KindName) => {
    const running = optional.get(plural);
    if (!discovered) return 'unknown';
    if (running) return running.forbidden() ? 'forbidden' : 'present';
    return forbidden.has(plural) ? 'forbidden' : 'absent';
  };

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
      crdTimer?.();
      await Promise.all(all().map((r) => r.stop()));
      await podPages?.close();
    },
    synced: () => discovered && everyCounted(synced),
    ready: (now = clock.now()) => discovered && everyCounted((r) => r.healthy(now)),
    status(now = clock.now()): ClusterSourceStatus {
      const kinds: ReflectorStatus[] = all().map((r) => r.status());
      const watched = (plural: KindName) => (crdState(plural) === 'present' ? optional.get(plural)!.status().apiVersion : crdState(plural));
      return {
        source: `kube-apiserver ${api.server}`,
        synced: discovered && everyCounted(synced),
        healthy: discovered && everyCounted((r) => r.healthy(now)),
        workloadSpreadCRD: crdState('workloadspreads'),
        openKruise: Object.fromEntries(OPTIONAL_KINDS.filter((k) => k.group === KRUISE_GROUP).map((k) => [k.plural, watched(k.plural)])),
        karpenter: { nodepools: watched('nodepools') },
        clusterAutoscaler: store.clusterAutoscaler() ?? null,
        kinds: kinds.map((k) => ({ ...k, objects: store.count(k.kind as KindName) })),
      };
    },
  };
}
