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

const managed = (manager: string, subresource: string | undefined, fields: Record<string, unknown>) => ({
  manager, operation: 'Update', apiVersion: 'v1', time: '2026-11-21T07:00:00Z', fieldsType: 'FieldsV1', ...(subresource ? { subresource } : {}), fieldsV1: fields,
});
const keys = (names: string[]) => Object.fromEntries([['.', {}], ...names.map((n) => [`f:${n}`, {}])]);

/**
 * A Node as a cloud kubelet registers it and kube-scheduler 1.20 forwards it in full-Nodes
 * mode: cloud labels and annotations, five conditions, the kubelet's default 50 images
 * (nodeStatusMaxImages), and the managedFields of kubelet and kube-controller-manager.
 */
export function kubeletNode(i: number): Record<string, any> {
  const n = rawNode(i);
  const name = n.metadata.name as string;
  Object.assign(n.metadata.labels, {
    'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/instance-type': 'm5.2xlarge',
    'failure-domain.beta.kubernetes.io/region': 'region-1', 'failure-domain.beta.kubernetes.io/zone': n.metadata.labels['topology.kubernetes.io/zone'],
    'node.kubernetes.io/lifecycle': 'normal', 'eks.amazonaws.com/nodegroup': 'workers-general-2026', 'eks.amazonaws.com/capacityType': 'ON_DEMAND',
    'k8s.io/cloud-provider-aws': '4b2e7c9f1a3d5e6f7a8b9c0d1e2f3a4b',
  });
  n.metadata.annotations = {
    'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-0${String(i).padStart(16, '0')}`, 'efs.csi.aws.com': `i-0${String(i).padStart(16, '0')}` }),
  };
  n.metadata.creationTimestamp = '2026-10-01T00:00:00Z';
  n.metadata.managedFields = [
    managed('kubelet', undefined, { 'f:metadata': { 'f:annotations': keys(['node.alpha.kubernetes.io/ttl', 'volumes.kubernetes.io/controller-managed-attach-detach']), 'f:labels': keys(Object.keys(n.metadata.labels)) } }),
    managed('kube-controller-manager', undefined, { 'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, [`v:"${n.spec.podCIDR}"`]: {} }, 'f:providerID': {} } }),
    managed('kubelet', 'status', { 'f:status': {
      'f:allocatable': keys(['cpu', 'ephemeral-storage', 'hugepages-1Gi', 'hugepages-2Mi', 'memory', 'pods']),
      'f:capacity': keys(['cpu', 'ephemeral-storage', 'hugepages-1Gi', 'hugepages-2Mi', 'memory', 'pods']),
      'f:conditions': Object.fromEntries(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready'].map((t) => [`k:{"type":"${t}"}`, keys(['lastHeartbeatTime', 'lastTransitionTime', 'message', 'reason', 'status'])])),
      'f:daemonEndpoints': { 'f:kubeletEndpoint': { 'f:Port': {} } }, 'f:images': {},
      'f:nodeInfo': keys(['architecture', 'bootID', 'containerRuntimeVersion', 'kernelVersion', 'kubeProxyVersion', 'kubeletVersion', 'machineID', 'operatingSystem', 'osImage', 'systemUUID']),
    } }),
  ];
  n.spec = { podCIDR: n.spec.podCIDR, podCIDRs: [n.spec.podCIDR], providerID: `aws:///${n.metadata.labels['topology.kubernetes.io/zone']}/i-0${String(i).padStart(16, '0')}` };
  const resources = { cpu: '8', 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '32386820Ki', pods: '58' };
  n.status.capacity = resources;
  n.status.allocatable = { ...resources, cpu: '7910m', 'ephemeral-storage': '95551679124', memory: '31369988Ki' };
  n.status.conditions.push({ type: 'NetworkUnavailable', status: 'False', lastHeartbeatTime: '2026-10-01T00:00:00Z', lastTransitionTime: '2026-10-01T00:00:00Z', reason: 'RouteCreated', message: 'RouteController created a route' });
  n.status.addresses = [
    { type: 'InternalIP', address: `10.0.${i >> 8}.${i & 255}` }, { type: 'ExternalIP', address: `198.51.${i >> 8}.${i & 255}` },
    { type: 'Hostname', address: `${name}.region-1.compute.internal` }, { type: 'InternalDNS', address: `ip-10-0-${i >> 8}-${i & 255}.region-1.compute.internal` },
  ];
  n.status.daemonEndpoints = { kubeletEndpoint: { Port: 10250 } };
  n.status.nodeInfo = {
    machineID: 'ec2f0c4b5a6d7e8f9a0b1c2d3e4f5a6b', systemUUID: 'ec2f0c4b-5a6d-7e8f-9a0b-1c2d3e4f5a6b', bootID: '5d8a1c3e-2b4f-4a6d-8c0e-1f3a5b7d9e0c',
    kernelVersion: '6.1.112-122.189.amzn2023.x86_64', osImage: 'Amazon Linux 2023.6.20241031', containerRuntimeVersion: 'containerd://1.7.22',
    kubeletVersion: 'v1.30.6-eks-94953ac', kubeProxyVersion: 'v1.30.6-eks-94953ac', operatingSystem: 'linux', architecture: 'amd64',
  };
  n.status.images = Array.from({ length: 50 }, (_, k) => ({
    names: [`123456789012.dkr.ecr.region-1.amazonaws.com/team-${k % 7}/service-${k}@sha256:${'0123456789abcdef'.repeat(4)}`, `123456789012.dkr.ecr.region-1.amazonaws.com/team-${k % 7}/service-${k}:v2.${k}.3`],
    sizeBytes: 80_000_000 + k * 1_000_003,
  }));
  return n;
}
