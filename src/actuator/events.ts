import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import { systemClock, type Clock } from '../common/clock.js';
import { WORKLOAD_KINDS } from '../cluster/kinds.js';
import type { SlimPod, SlimWorkload, SlimWorkloadSpread } from '../cluster/objects.js';
import type { SlimBinding } from '../cluster/karmada.js';
import type { Metrics } from '../metrics/metrics.js';
import { workloadKey } from '../placement/workload.js';

// Kubernetes Events on workloads for what an operator must notice, recorded as client-go's
// event recorder does: an identical event within the aggregation window is counted on the
// existing Event (a patch), not created again, and each object has a token bucket so a storm
// of decisions cannot flood the API server.

export type EventType = 'Normal' | 'Warning';

/** A Karmada resource template (the object a binding propagates), by reference. */
export interface TemplateRef { karmadaTemplate: true; apiVersion: string; kind: string; namespace: string; name: string; uid: string }

/** What an Event may be about: a workload, a WorkloadSpread, a pod, a Karmada binding or its resource template. */
type EventSubject = SlimWorkload | SlimWorkloadSpread | SlimPod | SlimBinding | TemplateRef;

/** An Event's object as the Event names it (and `key`, its spam filter's), a few short strings: what a waiting Event keeps. */
interface Involved { key: string; apiVersion: string; kind: string; namespace: string; name: string; uid: string }

function involved(o: EventSubject): Involved {
  const { namespace, name, uid } = o;
  if ('karmadaTemplate' in o) return { key: `${namespace || 'default'}/${o.kind}/${name}`, apiVersion: o.apiVersion, kind: o.kind, namespace, name, uid };
  // A ClusterResourceBinding's Events go to default, as kubectl describe looks for them.
  if ('schedulerName' in o) return { key: `${namespace || 'default'}/${o.kind}/${name}`, apiVersion: 'work.karmada.io/v1alpha2', kind: o.kind, namespace, name, uid };
  if ('targetRef' in o) return { key: `${namespace}/WorkloadSpread/${name}`, apiVersion: o.apiVersion, kind: 'WorkloadSpread', namespace, name, uid };
  if ('nodeName' in o) return { key: `${namespace}/Pod/${name}`, apiVersion: 'v1', kind: 'Pod', namespace, name, uid };
  return { key: workloadKey(o), apiVersion: o.apiVersion, kind: WORKLOAD_KINDS[o.kind].wireKind, namespace, name, uid };
}

export interface EventRecorder {
  /** Fire and forget: failures are logged and counted, never thrown into a decision. */
  record(subject: EventSubject, type: EventType, reason: string, message: string): void;
  settle(): Promise<void>;
}

export interface RecorderOptions {
  /** Events per object at once, then one per `refillMs` (client-go: 25, 5 minutes). */
  burst: number;
  refillMs: number;
  /** How long an identical event is counted on the existing one (client-go: 10 minutes). */
  aggregateMs: number;
  /** Events written at once, and waiting beyond those (then dropped, as client-go's broadcaster drops past 1,000). */
  inFlight: number;
  queued: number;
  /** While it holds, one Event at a time: the writes the Events report go to the API server first. */
  busy?: () => boolean;
  clock?: Clock;
}

// Events wait behind the writes they report: a few at once (client-go writes them one at a time), so that 2,000 of them
// after a member is lost do not crowd out the bindings' own patches on the API server.
const CLIENT_GO_RECORDER: RecorderOptions = { burst: 25, refillMs: 300_000, aggregateMs: 600_000, inFlight: 8, queued: 1000 };

const MESSAGE_MAX = 1024;

export function eventRecorder(api: ApiClient, log: Logger, metrics: Metrics, options: Partial<RecorderOptions> = {}): EventRecorder {
  const o = { ...CLIENT_GO_RECORDER, ...options };
  const clock = o.clock ?? systemClock;
  const buckets = new LRUCache<string, { tokens: number; at: number }>({ max: 4096 });
  const seen = new LRUCache<string, { name: string; count: number }>({ max: 4096, ttl: o.aggregateMs, perf: clock });
  const inflight = new Set<Promise<void>>();
  const waiting: (() => Promise<void>)[] = [];
  const settling: (() => void)[] = [];
  /** Names this process made in the same millisecond differ by it; another process's by the random part. */
  let sequence = 0;

  /** client-go's spam filter: a token bucket per object. */
  function allowed(objectKey: string): boolean {
    const now = clock.now();
    const b = buckets.get(objectKey) ?? { tokens: o.burst, at: now };
    const refills = Math.floor((now - b.at) / o.refillMs);
    if (refills > 0) {
      b.tokens = Math.min(o.burst, b.tokens + refills);
      b.at += refills * o.refillMs;
    }
    buckets.set(objectKey, b);
    if (b.tokens <= 0) return false;
    b.tokens--;
    return true;
  }

  /** `at`: when it was recorded (a waiting Event says when it happened, not when it was sent). */
  async function write(w: Involved, type: EventType, reason: string, message: string, at: number): Promise<void> {
    // Keyed as written: a message longer than an Event holds is not kept whole (4096 keys of at most ~1 KiB each).
    const key = `${w.key}\u0000${type}\u0000${reason}\u0000${message}`;
    const now = new Date(at).toISOString();
    const namespace = w.namespace || 'default';
    const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    const previous = seen.get(key);
    if (previous) {
      previous.count++;
      const body = JSON.stringify({ count: previous.count, lastTimestamp: now });
      const res = await api.request('PATCH', `${base}/${encodeURIComponent(previous.name)}`, { body, contentType: 'application/merge-patch+json', timeoutMs: 10_000 });
      if (res.status === 200) return void metrics.actuatorWrites.inc({ action: 'event', result: 'ok' });
      seen.delete(key); // gone (events expire after an hour): create it again below
    }
    const name = `${w.name}.${clock.now().toString(16)}${(sequence++ % 0x10000).toString(16).padStart(4, '0')}${Math.floor(Math.random() * 0xffff).toString(16)}`;
    const event = {
      apiVersion: 'v1', kind: 'Event', metadata: { name, namespace },
      involvedObject: { apiVersion: w.apiVersion, kind: w.kind, ...(w.namespace ? { namespace: w.namespace } : {}), name: w.name, uid: w.uid },
      type, reason, message, count: 1, firstTimestamp: now, lastTimestamp: now,
      source: { component: 'zonekeeper' }, reportingComponent: 'zonekeeper', reportingInstance: 'zonekeeper',
    };
    const res = await api.request('POST', base, { body: JSON.stringify(event), contentType: 'application/json', timeoutMs: 10_000 });
    if (res.status !== 201 && res.status !== 200) throw new Error(`POST ${base}: ${res.status} ${statusMessage(res.body)}`);
    seen.set(key, { name, count: 1 });
    metrics.actuatorWrites.inc({ action: 'event', result: 'ok' });
  }

  function pump(): void {
    // Busy: one at a time, so Events keep flowing; each one's end pumps again, at full width once the writes are done.
    while (inflight.size < (o.busy?.() ? 1 : o.inFlight) && waiting.length) {
      const p: Promise<void> = waiting.shift()!().finally(() => {
        inflight.delete(p);
        pump();
        if (!waiting.length && !inflight.size) for (const r of settling.splice(0)) r();
      });
      inflight.add(p);
    }
  }

  return {
    record(w, type, reason, message) {
      const subject = involved(w);
      if (!allowed(subject.key)) {
        metrics.actuatorWrites.inc({ action: 'event', result: 'rate-limited' });
        return;
      }
      if (waiting.length >= o.queued) {
        metrics.actuatorWrites.inc({ action: 'event', result: 'dropped' });
        return;
      }
      const at = clock.now();
      waiting.push(() => write(subject, type, reason, message.slice(0, MESSAGE_MAX), at).catch((err: Error) => {
        metrics.actuatorWrites.inc({ action: 'event', result: 'error' });
        log.warn({ workload: subject.key, reason, err: err.message }, 'event not recorded');
      }));
      pump();
    },
    async settle() {
      if (waiting.length || inflight.size) await new Promise<void>((r) => settling.push(r));
    },
  };
}

/** For file sources and tests without an API server: events go to the log. */
export function logRecorder(log: Logger): EventRecorder {
  return {
    record(w, type, reason, message) {
      log.info({ workload: involved(w).key, type, reason }, message);
    },
    async settle() {},
  };
}
