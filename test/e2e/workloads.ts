// Workloads the e2e suites create, as a user would write them.
import assert from 'node:assert/strict';
import type { ControlPlane } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';

export const SCHEDULER = 'zonekeeper';

/** A Deployment of busybox pods placed by zonekeeper's scheduler (null: the cluster's default one), default RollingUpdate strategy. */
export function deployment(namespace: string, name: string, replicas: number, schedulerName: string | null = SCHEDULER): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { ...(schedulerName ? { schedulerName } : {}), terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }] },
      },
    },
  };
}

export const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/**
 * A StatefulSet of busybox pods (10m CPU each), Parallel: `podSpec` is merged into its pod
 * template's spec (schedulerName, gates, affinity), `spec` into its own (volumeClaimTemplates).
 */
export function statefulSet(namespace: string, name: string, replicas: number, podSpec: Obj = {}, spec: Obj = {}): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace },
    spec: {
      replicas, serviceName: name, podManagementPolicy: 'Parallel', selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }], ...podSpec },
      },
      ...spec,
    },
  };
}

export const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });

/** A local PersistentVolume in `zone`, pre-bound to the claim (a StatefulSet's `<template>-<name>-<ordinal>`). */
export const preBoundVolume = (namespace: string, claim: string, zone: string): Obj => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `${namespace}-${claim}` },
  spec: {
    capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', persistentVolumeReclaimPolicy: 'Retain',
    claimRef: { namespace, name: claim }, local: { path: '/mnt/data' },
    nodeAffinity: { required: { nodeSelectorTerms: [zoneTerm(zone)] } },
  },
});

/** Brings the control plane up with zonekeeper's scheduler and two nodes in each of three zones. */
export async function threeZoneCluster(cp: ControlPlane, zonekeeperConfig: Record<string, unknown> = {}): Promise<{ kube: Kube; zones: Map<string, string> }> {
  await cp.up([{ name: SCHEDULER, extender: true }], zonekeeperConfig);
  const kube = new Kube(cp.api);
  for (const z of ZONES) for (const i of [1, 2]) await kube.addNode(`node-${z.slice(5)}-${i}`, z);
  return { kube, zones: await kube.nodeZones() };
}

/** A node pool as production clusters have them: nodes per zone, labels, taints. */
export interface NodePool {
  name: string;
  perZone: Record<string, number>;
  labels?: Record<string, string>;
  taints?: Obj[];
}

const CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';

/**
 * A production-shaped cluster: general nodes in zones a, b, c; a dedicated, tainted database pool
 * in a and b only; a control-plane node labelled with zone-d and tainted NoSchedule.
 */
export const PRODUCTION_POOLS: NodePool[] = [
  { name: 'general', perZone: { 'zone-a': 2, 'zone-b': 2, 'zone-c': 2 } },
  { name: 'db', perZone: { 'zone-a': 1, 'zone-b': 1 }, labels: { pool: 'db' }, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
  { name: 'control-plane', perZone: { 'zone-d': 1 }, labels: { [CONTROL_PLANE]: '' }, taints: [{ key: CONTROL_PLANE, effect: 'NoSchedule' }] },
];

/** Adds every pool's nodes, named `<pool>-<zone suffix>-<i>`; returns node name → zone. */
export async function addPools(kube: Kube, pools: readonly NodePool[]): Promise<Map<string, string>> {
  for (const pool of pools) {
    for (const [zone, count] of Object.entries(pool.perZone)) {
      for (let i = 1; i <= count; i++) await kube.addNode(`${pool.name}-${zone.replace(/^zone-/, '')}-${i}`, zone, pool.labels, pool.taints ?? null);
    }
  }
  return kube.nodeZones();
}

/** Stops every process; ZK_E2E_KEEP=1 keeps the logs and says where. */
export async function tearDown(cp: ControlPlane): Promise<void> {
  if (process.env.ZK_E2E_KEEP) console.log(`e2e logs kept in ${cp.dir}`);
  await cp.down(!!process.env.ZK_E2E_KEEP);
}

/** How many of `zones` are each zone, as "zone=n" sorted by zone: one line to assert a layout by. */
export function zoneCounts(zones: Iterable<string>): string {
  const counts = new Map<string, number>();
  for (const z of zones) counts.set(z, (counts.get(z) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([z, n]) => `${z}=${n}`).join(' ');
}

/**
 * A StatefulSet's pods each on its ordinal's pin (ordinal i in L[i mod 3], L frozen on it), the
 * zone in its nodeSelector and no gate left: what the gate and admission both write.
 */
export async function assertOnPins(kube: Kube, namespace: string, name: string, placed: Map<string, string>): Promise<void> {
  const list = await kube.frozenZones('apps/v1', 'StatefulSet', namespace, name);
  assert.deepEqual([...list].sort(), ['zone-a', 'zone-b', 'zone-c']);
  for (const [pod, zone] of placed) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], pod);
  for (const p of await kube.podsOf(namespace, `app=${name}`)) {
    assert.equal(p.spec.nodeSelector?.['topology.kubernetes.io/zone'], placed.get(p.metadata.name), `${p.metadata.name}'s nodeSelector`);
    assert.equal(p.spec.schedulingGates, undefined);
  }
}

/** A Deployment's pods each with a unique instance ID in [0, `count`), in its ID's zone of the list frozen on it. */
export async function assertIdsOnList(kube: Kube, namespace: string, name: string, placed: Map<string, string>, count: number): Promise<void> {
  const list = await kube.frozenZones('apps/v1', 'Deployment', namespace, name);
  const ids = new Set<number>();
  for (const p of await kube.podsOf(namespace, `app=${name}`)) {
    const id = Number(p.metadata.annotations?.['zonekeeper.io/instance-id']);
    ids.add(id);
    assert.equal(placed.get(p.metadata.name), list[id % list.length], `${p.metadata.name} (instance ID ${id})`);
  }
  assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i));
}

/**
 * Until zonekeeper's layout of a workload shows its `pods` pods bound, each with the deletion cost
 * zonekeeper wants: the costs are written paced and rewritten as pods bind, so "every pod has a
 * cost" can still hold a value from before (a Pending pod's).
 */
export async function costsSettled(admin: string, namespace: string, kind: string, name: string, pods: number): Promise<void> {
  let last = '';
  await eventually(`deletion costs of ${kind} ${namespace}/${name} as zonekeeper wants them`, async () => {
    const page = await (await fetch(`${admin}/debug/layouts?namespace=${namespace}`)).json() as Obj;
    const w = (page.workloads as Obj[]).find((x) => x.workload.kind === kind && x.workload.name === name);
    const ps: Obj[] = w?.pods ?? [];
    last = ps.map((p) => `${p.name}@${p.node || '-'} ${p.deletionCost?.current}/${p.deletionCost?.desired}`).join(', ');
    return ps.length === pods && ps.every((p) => p.node && p.deletionCost && p.deletionCost.current === String(p.deletionCost.desired));
  }).catch((e: Error) => assert.fail(`${e.message}: ${last}`));
}
