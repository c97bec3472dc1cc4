// Just enough of a Kubernetes client for the e2e tests, over zonekeeper's own ApiClient.
import type { ApiClient } from '../../src/cluster/apiClient.js';

export type Obj = Record<string, any>;

const PLURALS: Record<string, string> = {
  Node: 'nodes', Pod: 'pods', PersistentVolume: 'persistentvolumes', PersistentVolumeClaim: 'persistentvolumeclaims',
  StatefulSet: 'statefulsets', Deployment: 'deployments', ReplicaSet: 'replicasets', StorageClass: 'storageclasses',
  Namespace: 'namespaces', WorkloadSpread: 'workloadspreads', CustomResourceDefinition: 'customresourcedefinitions', Event: 'events',
  CloneSet: 'clonesets', ServiceAccount: 'serviceaccounts', ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings',
  PodDisruptionBudget: 'poddisruptionbudgets', PriorityClass: 'priorityclasses', ConfigMap: 'configmaps', Job: 'jobs',
  NodePool: 'nodepools', KWOKNodeClass: 'kwoknodeclasses', MutatingWebhookConfiguration: 'mutatingwebhookconfigurations', Secret: 'secrets',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies', ValidatingWebhookConfiguration: 'validatingwebhookconfigurations', ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings', Lease: 'leases',
  ResourceBinding: 'resourcebindings', PropagationPolicy: 'propagationpolicies', OverridePolicy: 'overridepolicies', Cluster: 'clusters',
  ClusterResourceBinding: 'clusterresourcebindings', ClusterPropagationPolicy: 'clusterpropagationpolicies', WorkloadRebalancer: 'workloadrebalancers',
  Role: 'roles', RoleBinding: 'rolebindings',
};
const CLUSTER_SCOPED = new Set(['Node', 'PersistentVolume', 'StorageClass', 'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass',
  'NodePool', 'KWOKNodeClass', 'Cluster', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
  'ClusterResourceBinding', 'ClusterPropagationPolicy', 'WorkloadRebalancer']);

export function pathOf(apiVersion: string, kind: string, namespace?: string, name?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = !CLUSTER_SCOPED.has(kind) && namespace ? `/namespaces/${namespace}` : '';
  return `${base}${ns}/${PLURALS[kind]}${name ? `/${name}` : ''}`;
}

export class Kube {
  constructor(readonly api: ApiClient) {}

  /**
   * One API call. A lost connection, a 429 or a 5xx is printed and tried again, twice: the
   * control plane shares two cores with everything else, and one lost call would fail a whole
   * suite's setup. A create whose answer was lost may find its object made: it reads it back.
   */
  async call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Obj> {
    for (let attempt = 1; ; attempt++) {
      let res: Awaited<ReturnType<ApiClient['request']>>;
      try {
        res = await this.api.request(method, path, { body: body === undefined ? undefined : JSON.stringify(body), contentType, timeoutMs: 30_000 });
      } catch (err) {
        if (attempt === 3) throw err;
        console.log(`# ${method} ${path}: ${(err as Error).message}; trying again`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if ((res.status === 429 || res.status >= 500) && attempt < 3) {
        console.log(`# ${method} ${path}: ${res.status} ${res.body.slice(0, 200)}; trying again`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      const name = (body as Obj | undefined)?.metadata?.name;
      if (res.status === 409 && method === 'POST' && attempt > 1 && name) return this.call('GET', `${path}/${name}`);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
      return JSON.parse(res.body);
    }
  }

  create(obj: Obj): Promise<Obj> {
    return this.call('POST', pathOf(obj.apiVersion, obj.kind, obj.metadata.namespace ?? 'default'), obj);
  }

  patch(apiVersion: string, kind: string, namespace: string | undefined, name: string, patch: Obj, subresource = ''): Promise<Obj> {
    return this.call('PATCH', pathOf(apiVersion, kind, namespace, name) + subresource, patch, 'application/merge-patch+json');
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<Obj> {
    return this.call('GET', pathOf(apiVersion, kind, namespace, name));
  }

  async list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<Obj[]> {
    const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
    return (await this.call('GET', pathOf(apiVersion, kind, namespace) + q)).items;
  }

  async delete(apiVersion: string, kind: string, namespace: string | undefined, name: string, gracePeriodSeconds?: number): Promise<void> {
    const q = gracePeriodSeconds === undefined ? '' : `?gracePeriodSeconds=${gracePeriodSeconds}`;
    const res = await this.api.request('DELETE', pathOf(apiVersion, kind, namespace, name) + q, { timeoutMs: 30_000 });
    if (res.status >= 300 && res.status !== 404) throw new Error(`DELETE ${name}: ${res.status} ${res.body.slice(0, 200)}`);
  }

  scale(kind: 'StatefulSet' | 'Deployment', namespace: string, name: string, replicas: number): Promise<Obj> {
    return this.patch('apps/v1', kind, namespace, name, { spec: { replicas } });
  }

  /** A Node with zone labels, Ready, with `taints` and without the not-ready taint admission adds. */
  async addNode(name: string, zone: string, extraLabels: Record<string, string> = {}, taints: Obj[] | null = null, cpu = '64'): Promise<void> {
    await this.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone, ...extraLabels } } });
    const now = new Date().toISOString();
    await this.patch('v1', 'Node', undefined, name, {
      status: {
        capacity: { cpu, memory: '256Gi', pods: '500' }, allocatable: { cpu, memory: '256Gi', pods: '500' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now }],
      },
    }, '/status');
    // Admission's not-ready taint off; the node's own taints (a dedicated pool's) on.
    await this.patch('v1', 'Node', undefined, name, { spec: { taints } });
  }

  /** Takes a node offline as a lost zone looks (NotReady, the unreachable taints) or brings it back. */
  async setOffline(name: string, offline: boolean): Promise<void> {
    const now = new Date().toISOString();
    const ready = offline
      ? { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: now, lastTransitionTime: now }
      : { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now };
    await this.patch('v1', 'Node', undefined, name, { status: { conditions: [ready] } }, '/status');
    const taints = offline ? ['NoSchedule', 'NoExecute'].map((effect) => ({ key: 'node.kubernetes.io/unreachable', effect, timeAdded: now })) : null;
    await this.patch('v1', 'Node', undefined, name, { spec: { taints } });
  }

  async podsOf(namespace: string, selector: string): Promise<Obj[]> {
    return (await this.list('v1', 'Pod', namespace, selector)).filter((p) => !p.metadata.deletionTimestamp);
  }

  /** Node name → zone label, for every node. */
  async nodeZones(): Promise<Map<string, string>> {
    return new Map((await this.list('v1', 'Node')).map((n) => [n.metadata.name, n.metadata.labels['topology.kubernetes.io/zone']]));
  }

  /** Waits until `count` live pods match the selector and all are bound; returns pod name → zone. */
  async bound(namespace: string, selector: string, count: number, zones: Map<string, string>, timeoutMs = 120_000): Promise<Map<string, string>> {
    return eventually(`${count} pods of ${namespace} (${selector}) bound`, async () => {
      await this.reapTerminating(namespace);
      const pods = await this.podsOf(namespace, selector);
      if (pods.length !== count || pods.some((p) => !p.spec.nodeName)) return undefined;
      return new Map(pods.map((p) => [p.metadata.name as string, zones.get(p.spec.nodeName)!]));
    }, timeoutMs);
  }

  /** The events of a watch of `path` (a list path, with its query if any) until the server ends it; an ERROR event throws. */
  async*watch(path: string, signal: AbortSignal): AsyncGenerator<{ type: string; object: Obj }> {
    const res = await this.api.stream(`${path}${path.includes('?') ? '&' : '?'}watch=1`, signal);
    if (res.statusCode !== 200) throw new Error(`watch ${path}: ${res.statusCode}`);
    res.setEncoding('utf8');
    let buffered = '';
    for await (const chunk of res as AsyncIterable<string>) {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const event = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (event.type === 'ERROR') throw new Error(`watch ${path}: ${event.object?.message}`);
        yield event;
      }
    }
  }

  /**
   * Watches the selected pods until `count` of them are bound (resolves with when each bound):
   * a measurement's own polling LIST of every pod loaded the API server it measured. A watch
   * the server closes is opened again where it left off.
   */
  watchBound(namespace: string, selector: string, count: number, timeoutMs: number,
    onCreated?: (pod: Obj) => void): { done: Promise<void>; stop(): void; seen: PodTimes } {
    const abort = new AbortController();
    const bound = new Set<string>();
    const seen: PodTimes = { created: new Map(), ungated: new Map(), bound: new Map() };
    const first = (m: Map<string, number>, name: string) => { if (!m.has(name)) m.set(name, Date.now()); };
    const done = (async () => {
      const deadline = setTimeout(() => abort.abort(), timeoutMs);
      let rv = (await this.call('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}&limit=1`)).metadata.resourceVersion;
      try {
        while (bound.size < count) {
          const path = `/api/v1/namespaces/${namespace}/pods?allowWatchBookmarks=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent(selector)}`;
          for await (const event of this.watch(path, abort.signal)) {
            rv = event.object?.metadata?.resourceVersion ?? rv;
            if (event.type === 'BOOKMARK' || event.type === 'DELETED') continue;
            const name = event.object.metadata.name as string;
            if (event.type === 'ADDED') onCreated?.(event.object);
            first(seen.created, name);
            if (!event.object.spec?.schedulingGates?.length) first(seen.ungated, name);
            if (event.object.spec?.nodeName) {
              first(seen.bound, name);
              bound.add(name);
            }
            if (bound.size >= count) break;
          }
        }
      } catch (err) {
        if (abort.signal.aborted && bound.size < count) throw new Error(`timed out after ${timeoutMs} ms: ${count} pods of ${namespace} (${selector}) bound (${bound.size} were)`);
        throw err;
      } finally {
        clearTimeout(deadline);
        abort.abort();
      }
    })();
    done.catch(() => {});
    return { done, stop: () => abort.abort(), seen };
  }

  /** The zone list frozen on a workload; waits for it: the write follows the first placement, it may land after the binding. */
  async frozenZones(apiVersion: string, kind: string, namespace: string, name: string): Promise<string[]> {
    const value = await eventually(`zonekeeper.io/zones on ${kind} ${namespace}/${name}`, async () =>
      (await this.get(apiVersion, kind, namespace, name)).metadata.annotations?.['zonekeeper.io/zones'] as string | undefined, 30_000);
    return value.split(',');
  }

  /**
   * Stands in for the missing kubelets for a while: bound pods become Running and Ready (so a
   * Deployment's rollout proceeds), `readyAfterMs` after they were first seen bound; terminating
   * ones are finished. Returns the stop.
   */
  kubelet(namespace: string, everyMs = 300, readyAfterMs = 0, startsOk: (p: Obj) => boolean = () => true): () => Promise<void> {
    let stopped = false;
    // When each pod was first seen bound: Ready `readyAfterMs` later, as a container that takes that long to start.
    const boundAt = new Map<string, number>();
    const loop = (async () => {
      while (!stopped) {
        try {
          await this.reapTerminating(namespace);
          for (const p of await this.list('v1', 'Pod', namespace)) {
            const ready = (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
            // A pod that does not start (a crash-looping revision, a lost node) is never made Ready.
            if (!p.spec.nodeName || ready || p.metadata.deletionTimestamp || !startsOk(p)) continue;
            if (!boundAt.has(p.metadata.uid)) boundAt.set(p.metadata.uid, Date.now());
            if (Date.now() - boundAt.get(p.metadata.uid)! < readyAfterMs) continue;
            await this.markReady(namespace, p.metadata.name).catch(() => undefined);
          }
        } catch { /* the next round tries again */ }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
    };
  }

  /** What a kubelet writes once a pod's containers started: Running, and Ready. */
  async markReady(namespace: string, name: string): Promise<void> {
    const now = new Date().toISOString();
    const conditions = ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now }));
    await this.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { status: { phase: 'Running', startTime: now, conditions } }, 'application/merge-patch+json');
  }

  /** Stands in for the missing kubelets: finishes the deletion of terminating pods. */
  async reapTerminating(namespace: string): Promise<number> {
    const pods = (await this.list('v1', 'Pod', namespace)).filter((p) => p.metadata.deletionTimestamp);
    for (const p of pods) await this.delete('v1', 'Pod', namespace, p.metadata.name, 0);
    return pods.length;
  }
}

/** When a watch first showed each pod, showed it without scheduling gates, and bound (ms since the epoch). */
export interface PodTimes { created: Map<string, number>; ungated: Map<string, number>; bound: Map<string, number> }

export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms: ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}
