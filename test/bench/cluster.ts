import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';

export const ZONES = ['zone-a', 'zone-b', 'zone-c'];
export const nodeName = (i: number) => `node-${ZONES[i % 3]!.slice(5)}-${Math.floor(i / 3)}`;

/** A raw Node as kubelets report it: labels, taints, conditions, images. */
export function rawNode(i: number): Record<string, any> {
  const name = nodeName(i);
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: String(1000 + i),
      labels: {
        'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': ZONES[i % 3], 'topology.kubernetes.io/region': 'region-1', 'node.kubernetes.io/instance-type': 'm5.2xlarge',
      },
    },
    spec: { podCIDR: `10.${i >> 8}.${i & 255}.0/24` },
    status: {
      capacity: { cpu: '8', memory: '32Gi', pods: '110' }, allocatable: { cpu: '7800m', memory: '30Gi', pods: '110' },
      conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({ type, status: type === 'Ready' ? 'True' : 'False', lastHeartbeatTime: '2026-11-21T00:00:00Z', lastTransitionTime: '2026-11-01T00:00:00Z', reason: 'KubeletReady', message: 'ok' })),
      addresses: [{ type: 'InternalIP', address: `10.0.${i >> 8}.${i & 255}` }, { type: 'Hostname', address: name }],
      nodeInfo: { kubeletVersion: 'v1.30.6', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.7.22', kernelVersion: '6.1.0', architecture: 'amd64', operatingSystem: 'linux' },
      images: Array.from({ length: 12 }, (_, k) => ({ names: [`registry.example.com/app-${k}@sha256:${'0123456789abcdef'.repeat(4)}`, `registry.example.com/app-${k}:v1.${k}`], sizeBytes: 50_000_000 + k })),
    },
  };
}

/** A raw Pod as the API server sends it, managedFields included. */
export function rawPod(i: number, owner: { kind: string; name: string }, node?: string): Record<string, any> {
  const name = `${owner.name}-${i}`;
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: `team-${i % 20}`, uid: `11111111-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: String(50_000 + i),
      creationTimestamp: '2026-11-21T07:00:00Z', generateName: `${owner.name}-`,
      labels: { app: owner.name, 'controller-revision-hash': `${owner.name}-5f4587f75c`, 'apps.kubernetes.io/pod-index': String(i) },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-20T00:00:00Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: '22222222-0000-4000-8000-000000000000', controller: true, blockOwnerDeletion: true }],
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-11-21T07:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:containers': {} } } }],
    },
    spec: {
      nodeName: node, schedulerName: 'zonekeeper', serviceAccountName: 'default',
      containers: [{ name: 'app', image: 'registry.example.com/app:v1', resources: { requests: { cpu: '100m', memory: '128Mi' } }, ports: [{ containerPort: 8080 }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-${name}` } }, { name: 'kube-api-access', projected: { sources: [] } }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: { phase: node ? 'Running' : 'Pending', conditions: [{ type: 'Ready', status: node ? 'True' : 'False' }], podIP: '10.1.2.3', qosClass: 'Burstable' },
  };
}

/** `nodes` nodes over 3 zones and a 300-replica StatefulSet "db" with its pods bound round-robin. */
export function benchCluster(nodes: number): ClusterStore {
  const store = new ClusterStore();
  for (let i = 0; i < nodes; i++) addObject(store, rawNode(i));
  addObject(store, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'default', uid: 'sts-db', annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }, spec: { replicas: 300 } });
  for (let i = 0; i < 300; i++) {
    const p = rawPod(i, { kind: 'StatefulSet', name: 'db' }, nodeName(i % nodes));
    p.metadata.namespace = 'default';
    p.spec.volumes = [];
    addObject(store, p);
  }
  return store;
}
