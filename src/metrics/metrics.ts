import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SnapshotSource } from '../cluster/source.js';
import { OFF_PIN_CAUSES, type WorkloadHealth } from '../placement/healthRecord.js';

/** Every metric zonekeeper exports, on one registry per process (tests make their own). */
export interface Metrics {
  registry: Registry;
  requestDuration: Histogram<'verb'>;
  connections: Counter<'listener'>;
  connectionsDropped: Counter<'listener'>;
  decisions: Counter<'verb' | 'outcome'>;
  badRequests: Counter<'verb' | 'status'>;
  internalErrors: Counter<'path'>;
  watchRestarts: Counter<'kind' | 'reason'>;
  pinVolumeConflicts: Counter<'namespace' | 'workload'>;
  invalidPreferences: Counter<'namespace' | 'workload'>;
  actuatorWrites: Counter<'action' | 'result'>;
  seatTableLeftOut: Gauge<'namespace'>;
  policyDisagreements: Counter<'reason'>;
  policyStaleTables: Counter;
  gateDecisions: Counter<'outcome'>;
  gateFallbacks: Counter<'result'>;
  leader: Gauge;
  rebalanceEvictions: Counter<'result'>;
  evictions: Counter<'asker' | 'outcome'>;
  rolloutPodsReplaced: Counter;
  rolloutPauses: Counter;
  /** Karmada's bindings zonekeeper schedules (docs/design.md#across-clusters). */
  federationPlans: Counter<'outcome'>;
  federationWrites: Counter<'write' | 'result'>;
  federationWriteSeconds: Histogram<'write'>;
  federationReplicas: Gauge<'binding' | 'cluster'>;
  federationUnplaced: Gauge<'binding'>;
}

/** The eviction gate's outcomes (docs/design.md#zone-at-a-time): zonekeeper_evictions_total's. */
const EVICTION_OUTCOMES = ['not-covered', 'allowed', 'refused', 'not-ready', 'not-leading', 'conflict', 'error'] as const;
/** Who asked: the webhook (the Eviction API's every eviction) or zonekeeper's own evictions, judged in process first. */
const EVICTION_ASKERS = ['api', 'zonekeeper'] as const;

/** Why zonekeeper decides a policy-decided pod otherwise (docs/design.md#the-policy): zonekeeper_policy_disagreements_total's reasons. */
export const POLICY_DISAGREEMENT_REASONS = ['other-zone', 'not-managed', 'other-rule'] as const;

/** A counter with each value of its one label shown at 0 before anything is counted. */
/** zonekeeper_evictions_total with every asker and outcome at 0 from the start. */
function zeroedEvictions(c: Counter<'asker' | 'outcome'>): Counter<'asker' | 'outcome'> {
  for (const asker of EVICTION_ASKERS) for (const outcome of EVICTION_OUTCOMES) c.inc({ asker, outcome }, 0);
  return c;
}

function zeroed<L extends string>(c: Counter<L>, label: L, values: readonly string[]): Counter<L> {
  for (const v of values) c.inc({ [label]: v } as Partial<Record<L, string>>, 0);
  return c;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults) collectDefaultMetrics({ register: registry, prefix: 'zonekeeper_' });
  return {
    registry,
    requestDuration: new Histogram({
      name: 'zonekeeper_request_duration_seconds',
      help: 'Time to answer an extender request, by verb.',
      labelNames: ['verb'],
      // Sub-millisecond buckets: a filter over 5,000 names is expected well under 2 ms.
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 5],
      registers: [registry],
    }),
    connections: new Counter({
      name: 'zonekeeper_http_connections_total',
      help: 'TCP connections accepted, by listener: against the request count it shows whether the scheduler keeps its connection alive.',
      labelNames: ['listener'],
      registers: [registry],
    }),
    connectionsDropped: new Counter({
      name: 'zonekeeper_http_connections_dropped_total',
      help: 'TCP connections the listener closed, by listener: at its caps (http.maxConnections, maxConnectionsPerSource), to make room for a source holding fewer, or past a phase\'s limit (handshake, headers, body, request); the client sees a reset and retries.',
      labelNames: ['listener'],
      registers: [registry],
    }),
    decisions: new Counter({
      name: 'zonekeeper_decisions_total',
      help: 'Extender decisions by verb and outcome (unmanaged, placed, no_fit, not_ready).',
      labelNames: ['verb', 'outcome'],
      registers: [registry],
    }),
    badRequests: new Counter({
      name: 'zonekeeper_bad_requests_total',
      help: 'Requests refused before a decision (400 malformed, 413 too large, 415 not JSON; 401 a webhook review from a caller not known to be kube-apiserver, answered without a write; 499 the client closed the connection before its body arrived), by verb.',
      labelNames: ['verb', 'status'],
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'zonekeeper_watch_restarts_total',
      help: 'Watch restarts by kind and reason (error, gone = 410 relist, stale = watchdog relist).',
      labelNames: ['kind', 'reason'],
      registers: [registry],
    }),
    pinVolumeConflicts: new Counter({
      name: 'zonekeeper_pin_volume_conflicts_total',
      help: 'Pods whose bound volume overrode their zone pin, counted once per pod.',
      labelNames: ['namespace', 'workload'],
      registers: [registry],
    }),
    invalidPreferences: new Counter({
      name: 'zonekeeper_invalid_zone_preferences_total',
      help: 'Invalid zonekeeper.io/zone-preferences annotations seen (once per distinct value); the defaults were used.',
      labelNames: ['namespace', 'workload'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'zonekeeper_leader',
      help: '1 while this process holds the writers\' Lease (deletion costs run here), 0 otherwise.',
      registers: [registry],
    }),
    rebalanceEvictions: new Counter({
      name: 'zonekeeper_rebalance_evictions_total',
      help: 'Pods repair moved off their zone through the Eviction API, by result (evicted, refused = a PodDisruptionBudget said no, error, would-evict = dry run).',
      labelNames: ['result'],
      registers: [registry],
    }),
    rolloutPodsReplaced: new Counter({
      name: 'zonekeeper_rollout_pods_replaced_total',
      help: 'Old-revision pods a zone-by-zone rollout evicted through the Eviction API (their StatefulSet controller makes the replacements).',
      registers: [registry],
    }),
    rolloutPauses: new Counter({
      name: 'zonekeeper_rollout_pauses_total',
      help: 'Zone-by-zone rollouts paused by zonekeeper: a new pod not available within the progress deadline.',
      registers: [registry],
    }),
    federationPlans: new Counter({
      name: 'zonekeeper_federation_plans_total',
      help: 'Plans of Karmada bindings by outcome: written, unchanged, waiting (not synced, or an ordinal range not yet seen), refused (a bad preference), conflict, error.',
      labelNames: ['outcome'], registers: [registry],
    }),
    federationWrites: new Counter({
      name: 'zonekeeper_federation_writes_total',
      help: 'Writes of zonekeeper karmada to bindings and ordinal OverridePolicies, by write (ordinals, clusters, status) and result (ok, conflict, error).',
      labelNames: ['write', 'result'], registers: [registry],
    }),
    federationWriteSeconds: new Histogram({
      name: 'zonekeeper_federation_write_seconds',
      help: "Time the Karmada API server took to answer one of zonekeeper karmada's writes, by write.",
      labelNames: ['write'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry],
    }),
    federationReplicas: new Gauge({
      name: 'zonekeeper_federation_replicas',
      help: 'Replicas a Karmada binding zonekeeper schedules has in each member cluster, as last planned.',
      labelNames: ['binding', 'cluster'], registers: [registry],
    }),
    federationUnplaced: new Gauge({
      name: 'zonekeeper_federation_unplaced_replicas',
      help: 'Replicas of a Karmada binding that no member cluster can take within its limits and capacity.',
      labelNames: ['binding'], registers: [registry],
    }),
    seatTableLeftOut: new Gauge({
      name: 'zonekeeper_seat_table_left_out',
      help: 'StatefulSets whose seats do not fit in their namespace\'s seat table (policy.maxBytes): admission or the gate decides their pods.',
      labelNames: ['namespace'],
      registers: [registry],
    }),
    // Every reason from the start at 0: an alert or a test reads the series before any disagreement.
    policyDisagreements: zeroed(new Counter({
      name: 'zonekeeper_policy_disagreements_total',
      help: 'Pods the MutatingAdmissionPolicy decided from the seat table that zonekeeper decides otherwise, once per pod, by reason (other-zone, not-managed, other-rule).',
      labelNames: ['reason'],
      registers: [registry],
    }), 'reason', POLICY_DISAGREEMENT_REASONS),
    policyStaleTables: new Counter({
      name: 'zonekeeper_policy_stale_tables_total',
      help: 'Pods the MutatingAdmissionPolicy decided from a seat table older than one the Lease holder had written 10 s or more before the pod was created: kube-apiserver reads an old table.',
      registers: [registry],
    }),
    internalErrors: new Counter({
      name: 'zonekeeper_internal_errors_total',
      help: 'Requests answered 500: a failure zonekeeper did not expect, logged with its stack, by route (extender verbs, admission, picker).',
      labelNames: ['path'],
      registers: [registry],
    }),
    actuatorWrites: new Counter({
      name: 'zonekeeper_actuator_writes_total',
      help: 'Writes to the API server by action and result.',
      labelNames: ['action', 'result'],
      registers: [registry],
    }),
    gateFallbacks: new Counter({
      name: 'zonekeeper_gate_fallbacks_total',
      help: 'Gated pods not scheduled in time under an adaptive fallback, by result: deleted (evicted), gone, refused (a PodDisruptionBudget), error, would-delete (dry run).',
      labelNames: ['result'],
      registers: [registry],
    }),
    evictions: zeroedEvictions(new Counter({
      name: 'zonekeeper_evictions_total',
      help: 'Evictions judged by the zone disruption budget, by asker (api: the webhook, every eviction the API server sends it; zonekeeper: its own, judged in process before it sends them, which the shipped webhook skips by identity) and outcome: allowed, refused (429: waits for another zone or its own budget), not-covered (no budget on the workload), not-ready, not-leading, conflict, error.',
      labelNames: ['asker', 'outcome'],
      registers: [registry],
    })),
    gateDecisions: new Counter({
      name: 'zonekeeper_gate_decisions_total',
      help: 'Gated pods decided, by outcome: zone, subset, as-is (lifted unchanged), waiting (kept gated).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}

/** Gauges read at scrape time from the cache and the reservations. */
export function registerStateGauges(m: Metrics, source: SnapshotSource, liveReservations: () => number): void {
  new Gauge({
    name: 'zonekeeper_features_off',
    help: 'Kinds only a feature needs that the API server refuses (Jobs, OpenKruise kinds) or does not serve (Jobs): 1 while that feature is off (the reason is in /debug/cache and the log).',
    labelNames: ['kind'],
    registers: [m.registry],
    collect() {
      this.reset();
      const status = source.status();
      for (const k of status.kinds) if (k.off !== undefined) this.set({ kind: k.kind }, 1);
      for (const [kind, state] of Object.entries({ ...status.openKruise, ...status.karpenter })) if (state === 'forbidden') this.set({ kind }, 1);
    },
  });
  new Gauge({
    name: 'zonekeeper_cache_objects',
    help: 'Objects held in the cache, by kind.',
    labelNames: ['kind'],
    registers: [m.registry],
    collect() {
      this.reset();
      for (const k of source.status().kinds) this.set({ kind: k.kind }, k.objects);
    },
  });
  new Gauge({
    name: 'zonekeeper_cache_synced',
    help: '1 when the kind has been listed and its watch is healthy, by kind.',
    labelNames: ['kind'],
    registers: [m.registry],
    collect() {
      this.reset();
      for (const k of source.status().kinds) this.set({ kind: k.kind }, k.synced ? 1 : 0);
    },
  });
  new Gauge({
    name: 'zonekeeper_ready',
    help: '1 when every required watch has synced and none has been failing for longer than cluster.maxStalenessSeconds (what /readyz says, before shutdown).',
    registers: [m.registry],
    collect() {
      this.set(source.ready() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'zonekeeper_reservations',
    help: 'Live reservations: seats given by filter that the watch does not show bound yet.',
    registers: [m.registry],
    collect() {
      this.set(liveReservations());
    },
  });
}

/**
 * Workload health read at scrape time (docs/operations.md#metrics): per workload for the first
 * `maxSeries` of the list (at risk first), totals over all of them.
 */
export function registerHealthGauges(m: Metrics, health: () => readonly WorkloadHealth[], maxSeries: number): void {
  const labelNames = ['namespace', 'kind', 'name'] as const;
  const perWorkload = (name: string, help: string, value: (h: WorkloadHealth) => number) => new Gauge({
    name, help, labelNames, registers: [m.registry],
    collect() {
      this.reset();
      for (const h of health().slice(0, maxSeries)) this.set({ namespace: h.ref.namespace, kind: h.ref.kind, name: h.ref.name }, value(h));
    },
  });
  perWorkload('zonekeeper_workload_zones', 'Zones (a WorkloadSpread\'s subsets) the workload\'s layout wants filled that hold a bound pod.', (h) => h.zones);
  perWorkload('zonekeeper_workload_zones_wanted', 'Zones (subsets) the layout for the workload\'s replicas fills: min(replicas, zones) for equal weights.', (h) => h.wanted);
  perWorkload('zonekeeper_workload_pods_off_pin', 'Bound pods outside their seat\'s zone, or over their zone\'s share.', (h) => h.offPin);
  const rolling = (name: string, help: string, value: (r: NonNullable<WorkloadHealth['rollout']>) => number) => new Gauge({
    name, help, labelNames, registers: [m.registry],
    collect() {
      this.reset();
      for (const h of health().slice(0, maxSeries)) {
        if (h.rollout) this.set({ namespace: h.ref.namespace, kind: h.ref.kind, name: h.ref.name }, value(h.rollout));
      }
    },
  });
  rolling('zonekeeper_rollout_paused', '1 while the workload\'s zone-by-zone rollout is paused (zonekeeper.io/zone-rollout-paused), 0 while it runs; no series when none runs.', (r) => (r.paused === undefined ? 0 : 1));
  rolling('zonekeeper_rollout_pods_remaining', 'Pods of a zone-by-zone rollout still on an old revision.', (r) => r.remaining);
  perWorkload('zonekeeper_workload_at_risk', '1 when the workload fills fewer zones than it should now or after a scale-down by its own removal order.', (h) => (h.atRisk ? 1 : 0));
  new Gauge({
    name: 'zonekeeper_workloads_at_risk', help: 'Managed workloads at risk, all of them (no per-workload limit).', registers: [m.registry],
    collect() { this.set(health().filter((h) => h.atRisk).length); },
  });
  new Gauge({
    name: 'zonekeeper_workloads_managed', help: 'Managed workloads whose health is kept.', registers: [m.registry],
    collect() { this.set(health().length); },
  });
  new Gauge({
    name: 'zonekeeper_pods_off_pin', help: 'Pods off their seat over all managed workloads, by cause (volume, fallback, placed-before, unknown).',
    labelNames: ['cause'], registers: [m.registry],
    collect() {
      const totals = Object.fromEntries(OFF_PIN_CAUSES.map((c) => [c, 0]));
      for (const h of health()) for (const c of OFF_PIN_CAUSES) totals[c]! += h.causes[c];
      for (const c of OFF_PIN_CAUSES) this.set({ cause: c }, totals[c]!);
    },
  });
}
