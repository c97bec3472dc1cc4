import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { memoryActuator } from '../../src/actuator/actuator.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { memorySource, type SnapshotSource } from '../../src/cluster/source.js';
import { parseConfig } from '../../src/common/config.js';
import type { DecisionService } from '../../src/decision/service.js';
import type { ExtenderService } from '../../src/extender/extender.js';
import { house } from '../../src/house.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { HealthTracker } from '../../src/controllers/layoutHealth.js';
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

/** The real routes, decision service and extender over an in-memory store, built by the house main.ts builds, reached with app.request(). */
export function testApp(store: ClusterStore, o: { config?: Record<string, unknown>; synced?: () => boolean } = {}): TestApp {
  const config = parseConfig(o.config ?? {});
  const base = memorySource(store, 'test');
  const source: SnapshotSource = o.synced ? { ...base, synced: o.synced, ready: o.synced } : base;
  const metrics = createMetrics();
  const clock = new FakeClock(Date.parse('2026-11-21T00:00:00Z'));
  const h = house({ config, source, actuator: memoryActuator(store, silent, metrics), metrics, log: silent, clock, leading: () => true });
  h.layoutHealth.flush();
  const extenderApp = extenderRoutes(h.extender, metrics, silent, config.extender);
  const adminApp = adminRoutes({ ...h.admin, metrics, serving: () => true });
  return {
    extenderApp, adminApp, service: h.service, extender: h.extender, source, clock, metrics, layoutHealth: h.layoutHealth,
    post: async (path, body) => extenderApp.request(path, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  };
}
