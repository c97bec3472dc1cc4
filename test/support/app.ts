import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { memorySource, type SnapshotSource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import { decisionService, type DecisionService } from '../../src/decision/service.js';
import { debugViews } from '../../src/decision/views.js';
import { createExtender, type ExtenderService } from '../../src/extender/extender.js';
import { createMetrics, registerHealthGauges, registerStateGauges } from '../../src/metrics/metrics.js';
import { healthTracker, type HealthTracker } from '../../src/controllers/layoutHealth.js';
import { policyAgreement } from '../../src/controllers/policyCheck.js';
import { adminRoutes } from '../../src/server/adminRoutes.js';
import { extenderRoutes } from '../../src/server/extenderRoutes.js';
import { FakeClock } from './placement.js';

export const silent = pino({ level: 'silent' });

export function fixture(name: string): { headers: Record<string, string>; body: any } {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'));
}

/** A Response whose json() is untyped: tests assert on its shape. */
export type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface TestApp {
  extenderApp: ReturnType<typeof extenderRoutes>;
  adminApp: ReturnType<typeof adminRoutes>;
  /** The one decision service the extender (and the gate, admission) call. */
  service: DecisionService;
  extender: ExtenderService;
  source: SnapshotSource;
  clock: FakeClock;
  metrics: ReturnType<typeof createMetrics>;
  /** Workload health over the store, computed when the app is made; `flush()` after changes. */
  layoutHealth: HealthTracker;
  post(path: string, body: unknown): Promise<JsonResponse>;
}

/** The real routes, decision service and extender over an in-memory store, reached with app.request(). */
export function testApp(store: ClusterStore, o: { config?: Record<string, unknown>; synced?: () => boolean } = {}): TestApp {
  const config = parseConfig(o.config ?? {});
  const base = memorySource(store, 'test');
  const source: SnapshotSource = o.synced ? { ...base, synced: o.synced, ready: o.synced } : base;
  const metrics = createMetrics();
  const clock = new FakeClock(Date.parse('2026-11-21T00:00:00Z'));
  const service = decisionService({ source, actuator: memoryActuator(store, silent, metrics), metrics, log: silent, config, clock });
  const extender = createExtender(service, { source, log: silent, config });
  registerStateGauges(metrics, source, () => service.state.reservations.size());
  const layoutHealth = healthTracker(source, service.state, () => {},
    { ...config.health, rollout: config.zoneRollout.enabled ? config.zoneRollout : undefined }, silent);
  layoutHealth.flush();
  registerHealthGauges(metrics, layoutHealth.all, config.metrics.maxWorkloadSeries);
  const extenderApp = extenderRoutes(extender, metrics, silent, config.extender);
  const adminApp = adminRoutes({
    source, views: debugViews(service, source), metrics, serving: () => true, layoutHealth, policyAgreement: (p) => policyAgreement(source, service, p),
  });
  return {
    extenderApp, adminApp, service, extender, source, clock, metrics, layoutHealth,
    post: async (path, body) => extenderApp.request(path, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  };
}
