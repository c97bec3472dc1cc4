// A small Kubernetes API server on 127.0.0.1 that speaks list (limit/continue) and watch
// (resourceVersion, bookmarks, 410 Gone) for the watch-cache integration tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeApiClient, type ApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import { applyMergePatch } from './mergePatch.js';

type Raw = Record<string, any>;
interface Event { rv: number; type: string; object: Raw }

const PATHS: Record<string, string> = {
  Node: '/api/v1/nodes', Pod: '/api/v1/pods', PersistentVolume: '/api/v1/persistentvolumes',
  PersistentVolumeClaim: '/api/v1/persistentvolumeclaims', StorageClass: '/apis/storage.k8s.io/v1/storageclasses',
  StatefulSet: '/apis/apps/v1/statefulsets', ReplicaSet: '/apis/apps/v1/replicasets', Deployment: '/apis/apps/v1/deployments', Job: '/apis/batch/v1/jobs',
  WorkloadSpread: '/apis/apps.kruise.io/v1alpha1/workloadspreads',
  CloneSet: '/apis/apps.kruise.io/v1alpha1/clonesets', AdvancedStatefulSet: '/apis/apps.kruise.io/v1beta1/statefulsets',
  // Karmada's, for the binding scheduler's tests; Secrets for a member's credentials.
  ResourceBinding: '/apis/work.karmada.io/v1alpha2/resourcebindings', ClusterResourceBinding: '/apis/work.karmada.io/v1alpha2/clusterresourcebindings',
  Cluster: '/apis/cluster.karmada.io/v1alpha1/clusters', PropagationPolicy: '/apis/policy.karmada.io/v1alpha1/propagationpolicies',
  ClusterPropagationPolicy: '/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies', OverridePolicy: '/apis/policy.karmada.io/v1alpha1/overridepolicies',
  Secret: '/api/v1/secrets',
};
/** OpenKruise's resources by version, served while `crdServed`. */
const KRUISE_RESOURCES: Record<string, { name: string; kind: string }[]> = {
  v1alpha1: [{ name: 'workloadspreads', kind: 'WorkloadSpread' }, { name: 'clonesets', kind: 'CloneSet' }],
  v1beta1: [{ name: 'statefulsets', kind: 'StatefulSet' }],
};
/** Kruise's StatefulSet is filed apart from apps/v1's. */
const pathOf = (o: Raw) => PATHS[String(o.apiVersion).startsWith('apps.kruise.io/') && o.kind === 'StatefulSet' ? 'AdvancedStatefulSet' : o.kind]!;

const keyOf = (o: Raw) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class FakeApiServer {
  private rv = 100;
  private readonly objects = new Map<string, Map<string, Raw>>();
  private readonly events = new Map<string, Event[]>();
  private readonly watchers = new Set<{ path: string; res: http.ServerResponse; since: number }>();
  /** Watches from resourceVersions below this get 410 Gone. */
  private compactedBelow = 0;
  /** While true, open watches receive nothing (a stalled connection). */
  silent = false;
  crdServed = false;
  readonly requests: string[] = [];
  readonly patches: { path: string; body: Raw }[] = [];
  /** Objects created with POST (other than Events, Leases and reviews), in order. */
  readonly creates: Raw[] = [];
  /** Core v1 Events created (and patched) through the API, by name. */
  readonly kubeEvents = new Map<string, Raw>();
  conflicts = 0;
  /** Patches received while held (`holdPatches`), answered in order by `releasePatches`: concurrent writers overlap. */
  private heldPatches: { path: string; apply: () => void }[] | undefined;
  /** While true, every watch opens with a line that is not JSON (a corrupt stream). */
  corruptWatches = false;
  /** Requests answered with an error instead, while `remaining` lasts. */
  readonly faults: { match: (method: string, path: string) => boolean; status: number; remaining: number; held?: Promise<void> }[] = [];
  /** Bearer tokens TokenReview accepts, and the nonResourceURL paths each user may get. */
  readonly tokens = new Map<string, { username: string; groups: string[]; audiences?: string[] }>();
  readonly allowedPaths = new Map<string, string[]>();
  /** Karmada's cluster proxy: `/apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy/…` passed on to NAME's server. */
  readonly proxies = new Map<string, FakeApiServer>();
  private server = http.createServer((req, res) => this.handle(req, res));
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** From now on patches wait, unanswered, until `releasePatches`. */
  holdPatches(): void {
    this.heldPatches ??= [];
  }

  /** How many patches are waiting (those to paths ending so, if given). */
  patchesHeld(pathEnd = ''): number {
    return this.heldPatches?.filter((p) => p.path.endsWith(pathEnd)).length ?? 0;
  }

  /** Applies the patches held, in the order they came, and answers later ones at once again. */
  releasePatches(): void {
    const held = this.heldPatches ?? [];
    this.heldPatches = undefined;
    for (const p of held) p.apply();
  }

  async stop(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  kubeconfig(): string {
    const dir = mkdtempSync(join(tmpdir(), 'zk-kc-'));
    const path = join(dir, 'config');
    writeFileSync(path, `apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:${this.port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: c, context: {cluster: fake, user: u}}]
current-context: c
`);
    return path;
  }

  /** zonekeeper's API client for this server, through a kubeconfig file as users give it. */
  client(): ApiClient {
    return kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: this.kubeconfig() }));
  }

  openWatches(path?: string): number {
    return [...this.watchers].filter((w) => !path || w.path === path).length;
  }

  /** The stored object, as a GET would return it (`kind` AdvancedStatefulSet for Kruise's StatefulSet). */
  get(kind: string, namespace: string, name: string): Raw | undefined {
    return this.objects.get(PATHS[kind]!)?.get(`${namespace}/${name}`);
  }

  put(obj: Raw, opts: { silently?: boolean } = {}): void {
    const path = pathOf(obj);
    const store = this.objects.get(path) ?? new Map();
    this.objects.set(path, store);
    const type = store.has(keyOf(obj)) ? 'MODIFIED' : 'ADDED';
    const object = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
    store.set(keyOf(obj), object);
    if (!opts.silently) this.emit(path, type, object);
    else this.compactedBelow = this.rv; // a change no watch will replay: older resourceVersions are gone
  }

  delete(obj: Raw, opts: { silently?: boolean } = {}): void {
    const path = pathOf(obj);
    const existing = this.objects.get(path)?.get(keyOf(obj));
    if (!existing) return;
    this.objects.get(path)!.delete(keyOf(obj));
    const object = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } };
    if (!opts.silently) this.emit(path, 'DELETED', object);
    else this.compactedBelow = this.rv;
  }

  /** Cuts every open watch connection, as a restarting API server or a load balancer would. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Makes every resourceVersion so far too old: the next watch from one gets 410. */
  compact(): void {
    this.compactedBelow = this.rv + 1;
  }

  /** Sends a 410 ERROR event down every open watch, as etcd compaction does. */
  expireWatches(): void {
    for (const w of this.watchers) w.res.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
    this.compact();
  }

  private emit(path: string, type: string, object: Raw): void {
    const ev = { rv: this.rv, type, object };
    const log = this.events.get(path) ?? [];
    log.push(ev);
    this.events.set(path, log);
    if (this.silent) return;
    for (const w of this.watchers) if (w.path === path) w.res.write(JSON.stringify({ type, object }) + '\n');
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url!, 'http://x');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.headers.authorization !== 'Bearer test-token') return this.json(res, 401, { kind: 'Status', code: 401, message: 'Unauthorized' });
    const fault = this.faults.find((f) => f.remaining > 0 && f.match(req.method!, url.pathname));
    if (fault) {
      fault.remaining--;
      // A held fault answers once the test lets it: a write still in flight.
      if (fault.held) return void fault.held.then(() => this.json(res, fault.status, { kind: 'Status', code: fault.status, message: 'injected fault' }));
      return this.json(res, fault.status, { kind: 'Status', code: fault.status, message: 'injected fault' });
    }
    const proxied = /^\/apis\/cluster\.karmada\.io\/v1alpha1\/clusters\/([^/]+)\/proxy(\/.*)$/.exec(url.pathname);
    if (proxied) return this.proxy(req, res, decodeURIComponent(proxied[1]!), proxied[2]! + url.search);
    if (req.method === 'POST' && url.pathname.endsWith('/tokenreviews')) return this.review(req, res, (spec) => {
      const found = this.tokens.get(spec.token);
      // As kube-apiserver: a token is good for the review's audiences only if it was issued for one (default: the API server's).
      const issued = found?.audiences ?? ['https://kubernetes.default.svc'];
      const audiences = spec.audiences ? issued.filter((a: string) => spec.audiences.includes(a)) : issued;
      if (!found || audiences.length === 0) return { authenticated: false, error: 'unknown token or audience' };
      const { audiences: _, ...user } = found;
      return { authenticated: true, user, audiences };
    });
    if (req.method === 'POST' && url.pathname.endsWith('/subjectaccessreviews')) return this.review(req, res, (spec) => ({
      allowed: (this.allowedPaths.get(spec.user) ?? []).some((p) => (p.endsWith('*') ? spec.nonResourceAttributes?.path.startsWith(p.slice(0, -1)) : p === spec.nonResourceAttributes?.path) && spec.nonResourceAttributes?.verb === 'get'),
    }));
    if (url.pathname === '/apis/apps.kruise.io') {
      return this.crdServed
        ? this.json(res, 200, { kind: 'APIGroup', name: 'apps.kruise.io', versions: Object.keys(KRUISE_RESOURCES).map((version) => ({ groupVersion: `apps.kruise.io/${version}`, version })) })
        : this.json(res, 404, { kind: 'Status', code: 404, message: 'not found' });
    }
    const version = /^\/apis\/apps\.kruise\.io\/([^/]+)$/.exec(url.pathname)?.[1];
    if (version) {
      const resources = KRUISE_RESOURCES[version];
      return this.crdServed && resources ? this.json(res, 200, { kind: 'APIResourceList', resources: resources.map((r) => ({ ...r, namespaced: true })) }) : this.json(res, 404, {});
    }
    if (url.pathname.startsWith('/apis/coordination.k8s.io/v1/')) return this.lease(req, res, url.pathname);
    if (/^\/api\/v1\/namespaces\/[^/]+\/events/.test(url.pathname)) return this.event(req, res, url.pathname);
    if (req.method === 'PATCH') return this.patch(req, res, url.pathname);
    const evicted = req.method === 'POST' ? /^(\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+)\/eviction$/.exec(url.pathname)?.[1] : undefined;
    if (evicted) return this.evict(res, evicted);
    const created = req.method === 'POST' ? /^(\/apis?\/.+)\/namespaces\/[^/]+\/([^/]+)$/.exec(url.pathname) : undefined;
    if (created && Object.values(PATHS).includes(`${created[1]}/${created[2]}`)) return this.create(req, res);
    const single = this.findSingle(url.pathname);
    if (single !== undefined) return single ? this.json(res, 200, single) : this.json(res, 404, { kind: 'Status', code: 404, message: 'not found' });
    const path = url.pathname;
    if (!Object.values(PATHS).includes(path) || (path.includes('kruise') && !this.crdServed)) return this.json(res, 404, { kind: 'Status', code: 404 });
    if (url.searchParams.get('watch') === '1') return this.watch(path, Number(url.searchParams.get('resourceVersion') ?? 0), res);
    const all = [...(this.objects.get(path)?.values() ?? [])];
    const limit = Number(url.searchParams.get('limit') ?? 0) || all.length;
    const start = Number(url.searchParams.get('continue') || 0);
    const page = all.slice(start, start + limit);
    const next = start + limit < all.length ? String(start + limit) : '';
    this.json(res, 200, { kind: 'List', metadata: { resourceVersion: String(this.rv), continue: next }, items: page });
  }

  /** As Karmada's proxy: the request to the member's server, its answer streamed back (watches too). */
  private proxy(req: http.IncomingMessage, res: http.ServerResponse, cluster: string, path: string): void {
    const member = this.proxies.get(cluster);
    if (!member) return this.json(res, 404, { kind: 'Status', code: 404, message: `clusters "${cluster}" not found` });
    const out = http.request({ host: '127.0.0.1', port: member.port, path, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${member.port}` } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  }

  /** Leases: GET, POST and PUT, the PUT conditional on metadata.resourceVersion as the API server does. */
  readonly leases = new Map<string, Raw>();
  private lease(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const m = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/.exec(path);
    if (!m) return this.json(res, 404, { kind: 'Status', code: 404 });
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = `${m[1]}/${m[2] ?? ''}`;
      if (req.method === 'GET') {
        const l = this.leases.get(key);
        return l ? this.json(res, 200, l) : this.json(res, 404, { kind: 'Status', code: 404, message: 'not found' });
      }
      const obj = JSON.parse(body);
      const name = `${m[1]}/${obj.metadata.name}`;
      if (req.method === 'POST') {
        if (this.leases.has(name)) return this.json(res, 409, { kind: 'Status', code: 409, reason: 'AlreadyExists' });
        this.leases.set(name, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
        return this.json(res, 201, this.leases.get(name));
      }
      const existing = this.leases.get(key);
      if (!existing) return this.json(res, 404, { kind: 'Status', code: 404 });
      if (obj.metadata.resourceVersion !== existing.metadata.resourceVersion) {
        this.conflicts++;
        return this.json(res, 409, { kind: 'Status', code: 409, reason: 'Conflict' });
      }
      this.leases.set(key, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
      return this.json(res, 200, this.leases.get(key));
    });
  }

  private event(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const name = /\/events\/([^/]+)$/.exec(path)?.[1];
      if (req.method === 'POST' && !name) {
        const ev = JSON.parse(body);
        this.kubeEvents.set(ev.metadata.name, ev);
        return this.json(res, 201, ev);
      }
      const existing = name ? this.kubeEvents.get(decodeURIComponent(name)) : undefined;
      if (req.method === 'PATCH' && existing) {
        Object.assign(existing, JSON.parse(body));
        return this.json(res, 200, existing);
      }
      this.json(res, 404, { kind: 'Status', code: 404, message: 'not found' });
    });
  }

  private review(req: http.IncomingMessage, res: http.ServerResponse, decide: (spec: Raw) => Raw): void {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      this.json(res, 201, { ...review, status: decide(review.spec) });
    });
  }

  private watch(path: string, since: number, res: http.ServerResponse): void {
    if (since < this.compactedBelow) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (this.corruptWatches) {
      res.end('{"type":"ADDED","object":{"metadata":\n');
      return;
    }
    const w = { path, res, since };
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
    for (const ev of this.events.get(path) ?? []) if (ev.rv > since) res.write(JSON.stringify({ type: ev.type, object: ev.object }) + '\n');
    res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: String(this.rv) } } }) + '\n');
  }

  /** GET of one namespaced object: the object, null when absent, undefined when not such a path. */
  private findSingle(path: string): Raw | null | undefined {
    const m = /^(\/apis?\/.+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
    const collection = m && `${m[1]}/${m[3]}`;
    if (!collection || !Object.values(PATHS).includes(collection)) return undefined;
    return this.objects.get(collection)?.get(`${m[2]}/${m[4]}`) ?? null;
  }

  private patch(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = req.headers['content-type'] === 'application/json-patch+json';
      const apply = () => (json ? this.applyJsonPatch(res, path, JSON.parse(body)) : this.applyPatch(res, path, JSON.parse(body)));
      if (this.heldPatches) this.heldPatches.push({ path, apply });
      else apply();
    });
  }

  /** POST of a namespaced object: stored (409 when it exists), as the API server creates. */
  private create(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const obj = JSON.parse(body);
      if (this.get(obj.kind, obj.metadata.namespace, obj.metadata.name)) return this.json(res, 409, { kind: 'Status', code: 409, reason: 'AlreadyExists' });
      this.creates.push(obj);
      this.put(obj);
      this.json(res, 201, this.get(obj.kind, obj.metadata.namespace, obj.metadata.name));
    });
  }

  /** The Eviction API for a pod no PodDisruptionBudget holds: deleted at once. */
  private evict(res: http.ServerResponse, podPath: string): void {
    const pod = this.findSingle(podPath);
    if (!pod) return this.json(res, 404, { kind: 'Status', code: 404, message: `${podPath} not found` });
    this.delete(pod);
    this.json(res, 201, { kind: 'Status', status: 'Success' });
  }

  private applyPatch(res: http.ServerResponse, path: string, patch: Raw): void {
    // The status subresource: only the patch's status applies (and its resourceVersion, if it names one).
    if (path.endsWith('/status')) {
      const rv = patch.metadata?.resourceVersion;
      return this.applyPatch(res, path.slice(0, -'/status'.length), { ...(rv === undefined ? {} : { metadata: { resourceVersion: rv } }), status: patch.status });
    }
    const existing = this.findSingle(path);
    if (!existing) return this.json(res, 404, { kind: 'Status', code: 404, message: `${path} not found` });
    // A merge patch that names a resourceVersion only applies to that version.
    const rv = patch.metadata?.resourceVersion;
    if (rv !== undefined && rv !== existing.metadata.resourceVersion) {
      this.conflicts++;
      return this.json(res, 409, { kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' });
    }
    this.patches.push({ path, body: patch });
    const next = applyMergePatch(existing, patch) as Raw;
    // A changed spec is a new generation, on objects that count them.
    if (typeof existing.metadata.generation === 'number' && JSON.stringify(next.spec) !== JSON.stringify(existing.spec)) next.metadata = { ...next.metadata, generation: existing.metadata.generation + 1 };
    this.put(next);
    this.json(res, 200, this.findSingle(path));
  }

  /**
   * A JSON patch of `test` and one-level `add` ops (what zonekeeper sends): 422 when a test fails, as the API server
   * answers; else applied and recorded as the merge patch it amounts to.
   */
  private applyJsonPatch(res: http.ServerResponse, path: string, ops: { op: string; path: string; value: unknown }[]): void {
    const existing = this.findSingle(path.replace(/\/status$/, ''));
    if (!existing) return this.json(res, 404, { kind: 'Status', code: 404, message: `${path} not found` });
    const at = (pointer: string) => pointer.split('/').slice(1).reduce<unknown>((o, k) => (o as Raw | undefined)?.[k], existing);
    const merge: Raw = {};
    for (const op of ops) {
      if (op.op === 'test' && JSON.stringify(at(op.path)) !== JSON.stringify(op.value)) {
        this.conflicts++;
        return this.json(res, 422, { kind: 'Status', code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' });
      }
      const [, top, field] = op.path.split('/');
      if (op.op === 'add') ((merge[top!] ??= {}) as Raw)[field!] = op.value;
    }
    this.applyPatch(res, path, merge);
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}
