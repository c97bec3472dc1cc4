// Workload health at 5,000 workloads and 150,000 pods: the full recompute (what the tracker
// does every health.intervalSeconds and `zonekeeper audit` does once), the per-event cost of
// keeping it, and `zonekeeper audit --snapshot` end to end on a `kubectl get -o json` file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { DecisionState } from '../../src/placement/policy.js';
import { defaultSettings } from '../support/placement.js';
import { nodeName, rawNode, rawPod, ZONES } from './cluster.js';
import { fmt } from './measure.js';
import { target } from './targets.js';

const NODES = 5000;
const WORKLOADS = 5000;
const PODS = 150_000;
const PER = PODS / WORKLOADS;

/**
 * 4,000 StatefulSets with frozen lists (every tenth with two pods piled into its first zone) and
 * 1,000 Deployments with zone preferences, 30 pods each: the raw objects, as kubectl lists them.
 */
export function healthObjects(): Record<string, any>[] {
  const objects: Record<string, any>[] = [];
  for (let i = 0; i < NODES; i++) objects.push(rawNode(i));
  let podIndex = 0;
  for (let w = 0; w < WORKLOADS; w++) {
    const namespace = `team-${w % 50}`;
    const sts = w < 4000;
    const name = sts ? `db-${w}` : `web-${w}`;
    const annotations = sts ? { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zones-frozen-at': '2026-11-21T06:00:00Z' }
      : { 'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1}}}' };
    const owner = sts ? { kind: 'StatefulSet', name } : { kind: 'ReplicaSet', name: `${name}-6c7d8bd9bc` };
    objects.push({ apiVersion: 'apps/v1', kind: sts ? 'StatefulSet' : 'Deployment', metadata: { name, namespace, uid: `w-${w}`, annotations }, spec: { replicas: PER } });
    if (!sts) {
      objects.push({
        apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { replicas: PER },
        metadata: { name: owner.name, namespace, uid: `rs-${w}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: `w-${w}`, controller: true }] },
      });
    }
    for (let i = 0; i < PER; i++) {
      const piled = sts && w % 10 === 0 && (i === 1 || i === 2);
      const p = rawPod(podIndex++, owner, nodeName(piled ? 0 : (w * 3 + i) % NODES));
      Object.assign(p.metadata, { namespace, name: `${name}-${i}` });
      p.metadata.labels['apps.kubernetes.io/pod-index'] = String(i);
      p.metadata.ownerReferences[0].uid = sts ? `w-${w}` : `rs-${w}`;
      p.spec.volumes = [];
      objects.push(p);
    }
  }
  return objects;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// The compiled program, as it runs in the image (npm run bench builds it first).
const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);

export async function healthCase(): Promise<void> {
  const { healthTracker } = await dist('controllers/layoutHealth.js');
  const { slimPod } = await dist('cluster/convert.js');
  const { addObject, memorySource } = await dist('cluster/source.js');
  const { ClusterStore } = await dist('cluster/store.js');
  const { Reservations } = await dist('decision/reservations.js');
  const { createLogger } = await dist('common/logger.js');
  const { fakeClock } = await dist('common/clock.js');
  const { NO_PENDING_FREEZES } = await dist('placement/fleet.js');
  const { fleetHealth } = await dist('placement/health.js');
  console.log(`\nworkload health: ${WORKLOADS} workloads (4,000 StatefulSets, 1,000 Deployments with preferences), ${PODS} pods, ${NODES} nodes`);
  const objects = healthObjects();
  const store = new ClusterStore();
  for (const o of objects) addObject(store, o);
  const state: DecisionState = { settings: defaultSettings(), reservations: new Reservations(30), pendingFreezes: NO_PENDING_FREEZES,
    unschedulableSubsets: new Map() };

  const full: number[] = [];
  let atRisk = 0;
  for (let round = 0; round < 5; round++) {
    const t = performance.now();
    const all = fleetHealth(store, state, { now: Date.now(), settleSeconds: 60 });
    full.push(performance.now() - t);
    atRisk = all.filter((h: { atRisk: boolean }) => h.atRisk).length;
  }
  console.log(`full recompute (fleetHealth):     median ${fmt(median(full), 0)} ms of 5, ${atRisk} at risk`);
  target('health, 150,000 pods: full recompute', median(full), 200, true, ' ms');

  // Per event: pods move one by one; the tracker's queue (on a clock the bench moves) recomputes the changed workloads every 100 events.
  const clock = fakeClock(Date.parse('2026-11-25T00:00:00Z'));
  const tracker = healthTracker(memorySource(store, 'bench'), state, () => {}, { settleSeconds: 60, intervalSeconds: 3600, clock }, createLogger('silent'));
  tracker.flush();
  tracker.start();
  await tracker.idle();
  const moves = objects.filter((o) => o.kind === 'Pod').slice(0, 20_000);
  const slim = moves.map((p, i) => slimPod({ ...p, spec: { ...p.spec, nodeName: nodeName((i * 7) % NODES) } }));
  const t0 = performance.now();
  for (let i = 0; i < slim.length; i++) {
    store.upsert('pods', slim[i]);
    if (i % 100 === 99) {
      await clock.advance(1000);
      await tracker.idle();
    }
  }
  const withHealth = performance.now() - t0;
  await tracker.stop();
  const back = moves.map((p) => slimPod(p));
  const t1 = performance.now();
  for (const p of back) store.upsert('pods', p);
  const storeOnly = performance.now() - t1;
  const perEvent = (withHealth - storeOnly) / slim.length;
  console.log(`kept per event (20,000 pod moves, flushed every 100): ${fmt(perEvent * 1000, 0)} us/event beyond the store's own ${fmt((storeOnly / slim.length) * 1000, 0)} us`);
  target('health, 150,000 pods: kept per pod event', perEvent, 1, true, ' ms');

  // The tracker's own sweep, as the server runs it (after the moves above): in slices on the event loop the extender shares.
  const sliced = healthTracker(memorySource(store, 'bench'), state, () => {}, { settleSeconds: 60, intervalSeconds: 3600 }, createLogger('silent'));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t = performance.now();
  sliced.start();
  while (sliced.all().length < WORKLOADS) await new Promise((r) => setTimeout(r, 1));
  const sweepMs = performance.now() - t;
  delay.disable();
  await sliced.stop();
  const longest = delay.max / 1e6;
  console.log(`the server's sweep (slices of 20 ms): all ${WORKLOADS} in ${fmt(sweepMs, 0)} ms; the event loop waited at most ${fmt(longest, 0)} ms at once`);
  target('health, 150,000 pods: longest event-loop wait in a sweep', longest, 200, true, ' ms');

  const dir = mkdtempSync(join(tmpdir(), 'zk-bench-audit-'));
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const cli = new URL('../../dist/cli.js', import.meta.url).pathname;
  const parse: number[] = [];
  const inSlices: number[] = [];
  const runs: number[] = [];
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    JSON.parse(readFileSync(file, 'utf8'));
    parse.push(performance.now() - t0);
    // In a process of its own, as the audit runs: this process's heap would slow its collector.
    const t1 = performance.now();
    const floor = spawnSync(process.execPath, ['--input-type=module', '-e', `import { readFileSync } from 'node:fs'; import { forEachListSlice } from ${JSON.stringify(new URL('../../dist/cluster/listSlices.js', import.meta.url).href)}; forEachListSlice(readFileSync(process.argv[1]), () => {});`, file]);
    inSlices.push(performance.now() - t1);
    if (floor.status !== 0) throw new Error(`the parse floor exited ${floor.status}: ${floor.stderr.toString().slice(0, 300)}`);
  }
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    const out = spawnSync(process.execPath, [cli, 'audit', '--snapshot', file, '-o', 'json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
    runs.push(performance.now() - t);
    if (out.status !== 1) throw new Error(`audit exited ${out.status}: ${out.stderr.slice(0, 300)}`);
  }
  const mb = statSync(file).size / 1e6;
  rmSync(dir, { recursive: true, force: true });
  console.log(`zonekeeper audit --snapshot (a ${fmt(mb, 0)} MB kubectl get -o json file, process start to exit): median ${fmt(median(runs), 0)} ms of 3; reading and parsing the file alone, keeping nothing: ${fmt(median(inSlices), 0)} ms in slices as the audit reads it, process start to exit (the floor), ${fmt(median(parse), 0)} ms by one JSON.parse in this process; the judgement itself is the full recompute above`);
  target('audit --snapshot, 5,000 workloads: process start to exit', median(runs), 2000, true, ' ms');
}
