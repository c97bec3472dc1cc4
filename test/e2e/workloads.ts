// Workloads the e2e suites create, as a user would write them.
import type { ControlPlane } from './controlPlane.js';
import { Kube, type Obj } from './kube.js';

export const SCHEDULER = 'zonekeeper';

/** A Deployment of busybox pods placed by zonekeeper's scheduler, default RollingUpdate strategy. */
export function deployment(namespace: string, name: string, replicas: number): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { schedulerName: SCHEDULER, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }] },
      },
    },
  };
}

export const ZONES = ['zone-a', 'zone-b', 'zone-c'];

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

/** Stops every process; ZK_E2E_KEEP=1 keeps the logs and says where. */
export async function tearDown(cp: ControlPlane): Promise<void> {
  if (process.env.ZK_E2E_KEEP) console.log(`e2e logs kept in ${cp.dir}`);
  await cp.down(!!process.env.ZK_E2E_KEEP);
}
