// Workloads the e2e suites create, as a user would write them.
import type { Obj } from './kube.js';

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
