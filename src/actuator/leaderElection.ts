import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { systemClock, type Timers } from '../common/clock.js';

// One writer among replicas: the holder of a coordination.k8s.io Lease, as client-go's
// LeaderElector does it (client-node has none). Acquire or renew every retry period; a lease
// held by another counts as expired only when this process has seen it unchanged for a whole
// lease duration on its own clock (so the clocks of the replicas need not agree); a leader
// that cannot renew within the renew deadline stops leading; release on shutdown.

export interface LeaseOptions {
  namespace: string;
  name: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** Defaults to hostname_uuid, unique per process. */
  identity?: string;
}

export interface LeaderCallbacks {
  /** This process now holds the lease: start writing. */
  onStartedLeading(): void;
  /** It no longer does (or is shutting down): stop writing before anyone else starts. */
  onStoppedLeading(): Promise<void> | void;
}

export interface LeaderElector {
  readonly identity: string;
  isLeader(): boolean;
  /** Why the API server refuses this identity the Lease (401 or 403 on its last try), or ''. */
  refused(): string;
  start(): void;
  /** Stops leading (callbacks first), then releases the lease so another replica takes over at once. */
  stop(): Promise<void>;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease { metadata: { resourceVersion?: string; name?: string; namespace?: string }; spec?: LeaseSpec }

/** MicroTime, as the Lease API wants it: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export function leaseElector(api: ApiClient, o: LeaseOptions, log: Logger, cb: LeaderCallbacks, clock: Timers = systemClock): LeaderElector {
  const identity = o.identity ?? `${hostname()}_${randomUUID()}`;
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(o.namespace)}/leases`;
  const one = `${path}/${encodeURIComponent(o.name)}`;
  let leading = false;
  let stopped = false;
  let lastRenew = 0;
  // What this process last saw of the lease, and when (its own clock).
  let observed: { spec: string; at: number } | undefined;
  let holderSeen = '';
  let refusal = '';
  /** A 401 or 403 is a Lease this identity can never take until its RBAC changes: said, not just retried. */
  const judged = (verb: string, status: number, body: string) => {
    if (status === 401 || status === 403) refusal = `${verb} the Lease ${o.namespace}/${o.name}: ${status} ${statusMessage(body)}`;
    else if (status < 300 || status === 409) refusal = '';
  };
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  const spec = (now: number, prev: LeaseSpec | undefined): LeaseSpec => ({
    holderIdentity: identity,
    leaseDurationSeconds: o.leaseDurationSeconds,
    acquireTime: prev?.holderIdentity === identity && prev.acquireTime ? prev.acquireTime : microTime(now),
    renewTime: microTime(now),
    leaseTransitions: (prev?.leaseTransitions ?? 0) + (prev && prev.holderIdentity !== identity ? 1 : 0),
  });

  async function tryAcquireOrRenew(): Promise<boolean> {
    const now = clock.now();
    const got = await api.request('GET', one, { timeoutMs: o.renewDeadlineSeconds * 1000 });
    judged('get', got.status, got.body);
    if (got.status === 404) {
      const res = await api.request('POST', path, {
        body: JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: o.name, namespace: o.namespace }, spec: spec(now, undefined) }),
        contentType: 'application/json', timeoutMs: o.renewDeadlineSeconds * 1000,
      });
      judged('create', res.status, res.body);
      if (res.status === 201) return true;
      if (res.status !== 409) log.warn({ lease: `${o.namespace}/${o.name}`, status: res.status, err: statusMessage(res.body) }, 'could not create the lease');
      return false;
    }
    if (got.status !== 200) throw new Error(`GET lease: ${got.status} ${statusMessage(got.body)}`);
    const lease = JSON.parse(got.body) as Lease;
    const current = lease.spec ?? {};
    const seen = JSON.stringify(current);
    if (observed?.spec !== seen) observed = { spec: seen, at: now };
    const holder = current.holderIdentity ?? '';
    holderSeen = holder;
    const duration = (current.leaseDurationSeconds ?? o.leaseDurationSeconds) * 1000;
    if (holder && holder !== identity && observed.at + duration > now) return false;
    const res = await api.request('PUT', one, {
      body: JSON.stringify({ ...lease, spec: spec(now, current) }),
      contentType: 'application/json', timeoutMs: o.renewDeadlineSeconds * 1000,
    });
    judged('update', res.status, res.body);
    if (res.status === 200) {
      observed = { spec: JSON.stringify(JSON.parse(res.body).spec ?? {}), at: now };
      return true;
    }
    if (res.status !== 409) log.warn({ lease: `${o.namespace}/${o.name}`, status: res.status, err: statusMessage(res.body) }, 'could not update the lease');
    return false;
  }

  async function stopLeading(why: string): Promise<void> {
    if (!leading) return;
    leading = false;
    log.warn({ lease: `${o.namespace}/${o.name}`, identity, why }, 'stopped leading: writers off');
    await cb.onStoppedLeading();
  }

  /** Waits for the next retry, or less when stop() wakes it. */
  function nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = clock.after(ms, resolve);
      wake = () => {
        cancel();
        resolve();
      };
    });
  }

  async function run(): Promise<void> {
    while (!stopped) {
      let ok = false;
      try {
        ok = await tryAcquireOrRenew();
      } catch (err) {
        log.warn({ lease: `${o.namespace}/${o.name}`, err: (err as Error).message }, 'lease request failed');
      }
      if (stopped) break;
      const now = clock.now();
      if (ok) {
        lastRenew = now;
        if (!leading) {
          leading = true;
          log.info({ lease: `${o.namespace}/${o.name}`, identity }, 'started leading: writers on');
          cb.onStartedLeading();
        }
      } else if (leading && holderSeen && holderSeen !== identity) {
        await stopLeading(`the lease is held by ${holderSeen}`);
      } else if (leading && now - lastRenew >= o.renewDeadlineSeconds * 1000) {
        await stopLeading(`could not renew within ${o.renewDeadlineSeconds}s`);
      }
      // Followers retry with jitter, so replicas do not ask in step.
      await nap(o.retryPeriodSeconds * 1000 * (leading ? 1 : 1 + Math.random() * 0.2));
    }
  }

  async function release(): Promise<void> {
    const got = await api.request('GET', one, { timeoutMs: 2000 });
    if (got.status !== 200) return;
    const lease = JSON.parse(got.body) as Lease;
    if (lease.spec?.holderIdentity !== identity) return;
    const now = clock.now();
    await api.request('PUT', one, {
      body: JSON.stringify({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now) } }),
      contentType: 'application/json', timeoutMs: 2000,
    });
  }

  return {
    identity,
    isLeader: () => leading,
    refused: () => refusal,
    start() {
      loop ??= run();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      const held = leading;
      await stopLeading('shutting down');
      if (held) {
        try {
          await release();
          log.info({ lease: `${o.namespace}/${o.name}`, identity }, 'lease released');
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'could not release the lease; it expires by itself');
        }
      }
    },
  };
}
