import type { Logger } from 'pino';
import type { ApiClient } from './apiClient.js';
import { KARMADA_KINDS, ordinalsPolicyName, type SlimBinding, type SlimMemberCluster, type SlimOrdinalOverride, type SlimPropagationPolicy } from './karmada.js';
import { ZONE_LABEL } from './annotations.js';
import { MEMBER_KINDS, WORKLOAD_KINDS, type KindName, type KindSpec, type WorkloadKind } from './kinds.js';
import { apiListerWatcher } from './listerWatcher.js';
import { accessRefusal, memberClient, memberCredential, type MemberAccess } from './memberAccess.js';
import type { OwnerRef, SlimNode, SlimPod } from './objects.js';
import { Reflector, type ReflectorOptions, type ReflectorStore } from './reflector.js';
import { ClusterStore, type NodeUsage, type Snapshot } from './store.js';
import { systemClock, type Timers } from '../common/clock.js';

// The federation as zonekeeper sees it (docs/design.md#across-clusters): Karmada's bindings,
// clusters and policies watched on the Karmada control plane, and each member's nodes, pods and
// their owners (MEMBER_KINDS) watched into a ClusterStore of its own, the one cluster's store, through Karmada's cluster
// proxy (or, opted in, directly: memberAccess.ts). Never blind: a member whose watches are not healthy, or that is
// refused, has no reading: its capacity is unknown.

/** zonekeeper's read of one member for one workload (placement/clusterDivision.ts's MemberReading). */
interface MemberRead {
  nodes: readonly SlimNode[];
  /** Changes whenever a node comes, goes or has its labels or taints changed (ClusterStore.nodesVersion). */
  nodesVersion: number;
  nodeUsage: (node: string) => NodeUsage;
  workloadPods: readonly SlimPod[];
}

type FederationChange = 'binding' | 'cluster' | 'policy' | 'override' | 'member';

/** A member as zonekeeper reads it; its zones are its nodes', else those Karmada's Cluster names. */
interface MemberStatus { name: string; healthy: boolean; error: string; zones: string[] }

export interface FederationView {
  ready(): boolean;
  synced(): boolean;
  bindings(): SlimBinding[];
  binding(key: string): SlimBinding | undefined;
  clusters(): SlimMemberCluster[];
  policy(ref: NonNullable<SlimBinding['policy']>): SlimPropagationPolicy | undefined;
  /** The OverridePolicies of a namespace that set a StatefulSet's spec.ordinals, or bear zonekeeper's name or label for it. */
  ordinalOverrides(namespace: string, statefulSet: string): SlimOrdinalOverride[];
  /** Undefined while zonekeeper's watches of the member are not healthy. */
  reading(cluster: string, workload: { kind: string; namespace: string; name: string }): MemberRead | undefined;
  members(): MemberStatus[];
  onChange(fn: (what: FederationChange, key: string) => void): void;
  start(): void;
  stop(): Promise<void>;
}

type Emit = (what: FederationChange, key: string) => void;

/** Karmada's objects by kind and key. */
export class KarmadaStore implements ReflectorStore {
  readonly objects = new Map<KindName, Map<string, any>>();
  constructor(private readonly emit: Emit) {}
  keyOf(_kind: KindName, obj: any): string { return obj.namespace ? `${obj.namespace}/${obj.name}` : obj.name; }
  private of(kind: KindName): Map<string, any> {
    let m = this.objects.get(kind);
    if (!m) this.objects.set(kind, (m = new Map()));
    return m;
  }

  upsert(kind: KindName, obj: unknown): void {
    const key = this.keyOf(kind, obj);
    this.of(kind).set(key, obj);
    this.told(kind, key);
  }

  delete(kind: KindName, key: string): void {
    this.of(kind).delete(key);
    this.told(kind, key);
  }

  keys(kind: KindName): Iterable<string> { return this.of(kind).keys(); }
  get<T>(kind: KindName, key: string): T | undefined { return this.of(kind).get(key) as T | undefined; }
  all<T>(kind: KindName): T[] { return [...this.of(kind).values()] as T[]; }
  private told(kind: KindName, key: string): void {
    const what: FederationChange = kind === 'memberclusters' ? 'cluster' : kind === 'overridepolicies' ? 'override'
      : kind.endsWith('propagationpolicies') ? 'policy' : 'binding';
    this.emit(what, key);
  }
}

interface MemberConnection { access: string; store: ClusterStore; reflectors: Reflector[]; error: string; stopped: boolean; credential: string }

/** `secretRecheckMs`: how often a direct member's Secret is read again (a rotated token or CA: the client is built anew). */
export interface FederationOptions extends ReflectorOptions { clock?: Timers; secretRetryMs?: number; secretRecheckMs?: number; memberAccess?: MemberAccess }

/** What a member is read with: a change to any of it connects anew (a changed secretRef too). */
const accessKey = (c: SlimMemberCluster) => JSON.stringify([c.apiEndpoint, c.syncMode, c.secretRef, c.impersonatorSecret]);

const KARMADA_WATCHED: readonly KindSpec[] = Object.values(KARMADA_KINDS);

/** Those of `items` whose controller reference carries `owner`'s uid: a name alone is anyone's to write. */
const controlledBy = <T extends { owner: OwnerRef | undefined }>(items: Iterable<T>, owner: { uid: string }): T[] =>
  [...items].filter((o) => o.owner?.uid === owner.uid);

/** The workload kinds whose pods a member's reading holds; any other kind's pods count for none there. */
const READ_WORKLOADS: readonly WorkloadKind[] = ['StatefulSet', 'Deployment'];

/**
 * A StatefulSet's pods, or a Deployment's through the ReplicaSets it controls, each link checked by uid in the
 * member; none for another kind (nothing there to check its pods against) or a workload the member does not hold.
 */
function memberWorkloadPods(s: Snapshot, w: { kind: string; namespace: string; name: string }): SlimPod[] {
  const kind = READ_WORKLOADS.find((k) => k === w.kind);
  const workload = kind && s.workload(kind, w.namespace, w.name);
  if (!workload) return [];
  const via = WORKLOAD_KINDS[workload.kind].podsOwnedVia;
  const owners = via ? controlledBy(s.ownedWorkloads(workload.kind, w.namespace, w.name), workload).filter((o) => o.kind === via) : [workload];
  return owners.flatMap((o) => controlledBy(s.podsOwnedBy(o.kind, w.namespace, o.name), o));
}

/** A member's nodes, read off their slots: a plan reads every member's, and a walk of the slots is the fastest way there. */
const nodesOf = (s: Snapshot): SlimNode[] => s.nodesBySlot().filter((n): n is SlimNode => n !== undefined);

/** What a view reads of Karmada's objects and of the members read (undefined: not read), the watch's and a file's alike. */
export function federationReads(
  store: KarmadaStore, member: (cluster: string) => ClusterStore | undefined,
): Pick<FederationView, 'bindings' | 'binding' | 'clusters' | 'policy' | 'ordinalOverrides' | 'reading'> & { zones(c: SlimMemberCluster): string[] } {
  return {
    bindings: () => [...store.all<SlimBinding>('resourcebindings'), ...store.all<SlimBinding>('clusterresourcebindings')],
    binding: (key) => store.get<SlimBinding>(key.includes('/') ? 'resourcebindings' : 'clusterresourcebindings', key),
    clusters: () => store.all<SlimMemberCluster>('memberclusters').sort((a, b) => (a.name < b.name ? -1 : 1)),
    policy: (ref) => (ref.kind === 'PropagationPolicy'
      ? store.get<SlimPropagationPolicy>('propagationpolicies', `${ref.namespace}/${ref.name}`)
      : store.get<SlimPropagationPolicy>('clusterpropagationpolicies', ref.name)),
    ordinalOverrides: (namespace, sts) => store.all<SlimOrdinalOverride>('overridepolicies').filter((o) => o.namespace === namespace
      && (o.owner === sts || o.name === ordinalsPolicyName(sts) || o.setsOrdinalsOf.includes(sts) || o.setsOrdinalsOf.includes('*'))),
    reading(cluster, w) {
      const s = member(cluster);
      return s && { nodes: nodesOf(s), nodesVersion: s.nodesVersion(), nodeUsage: (n) => s.nodeUsage(n), workloadPods: memberWorkloadPods(s, w) };
    },
    /** Its zones: its nodes', else those Karmada's Cluster names. */
    zones(c) {
      const seen = member(c.name)?.zones(ZONE_LABEL) ?? [];
      return seen.length ? [...seen] : [...c.zones];
    },
  };
}

/** A member's store: the one cluster's, `changed` told of each node, pod and workload written or removed there. */
function memberStore(changed: () => void): ClusterStore {
  const store = new ClusterStore();
  store.onNode(changed);
  store.onPod(changed);
  store.onWorkload(changed);
  return store;
}

/** Watches Karmada (through `api`) and every member Karmada names. */
export function federationWatch(api: ApiClient, opts: FederationOptions, log: Logger): FederationView {
  const clock = opts.clock ?? systemClock;
  const listeners: Emit[] = [];
  const emit: Emit = (what, key) => { for (const fn of listeners) fn(what, key); };
  const store = new KarmadaStore((what, key) => {
    if (what === 'cluster') connect(key);
    emit(what, key);
  });
  const reflectors = KARMADA_WATCHED.map((k) => new Reflector(apiListerWatcher(api, k), k, store, opts, log, undefined, clock));
  const members = new Map<string, MemberConnection>();
  const access = opts.memberAccess ?? 'proxy';
  const recheckMs = opts.secretRecheckMs ?? 60_000;
  let started = false;

  /** `renew`: built anew even with the Cluster unchanged (its Secret changed). */
  function connect(name: string, renew = false): void {
    if (!started) return;
    const c = store.get<SlimMemberCluster>('memberclusters', name);
    const old = members.get(name);
    if (old && c && old.access === accessKey(c) && !renew) return;
    if (old) {
      old.stopped = true;
      members.delete(name);
      void Promise.all(old.reflectors.map((r) => r.stop()));
    }
    if (!c || !c.apiEndpoint) return;
    const conn: MemberConnection = { access: accessKey(c), store: memberStore(() => emit('member', name)), reflectors: [], error: 'connecting', stopped: false, credential: '' };
    members.set(name, conn);
    const refused = accessRefusal(c, access);
    if (refused) {
      conn.error = refused;
      log.warn({ member: name, err: refused }, 'member cluster not read: its capacity is unknown');
      return;
    }
    const attempt = (): void => {
      memberClient(api, c, access).then(({ client, credential }) => {
        if (conn.stopped) return;
        conn.error = '';
        conn.credential = credential;
        const memberLog = log.child({ member: name });
        conn.reflectors = MEMBER_KINDS.map((k) => new Reflector(apiListerWatcher(client, k), k, conn.store, opts, memberLog, undefined, clock));
        for (const r of conn.reflectors) r.start();
        if (access === 'direct') clock.after(recheckMs, recheck);
      }, (err: Error) => {
        if (conn.stopped) return;
        conn.error = err.message;
        log.warn({ member: name, err: err.message }, 'cannot read member cluster: its capacity is unknown');
        clock.after(opts.secretRetryMs ?? 5000, attempt);
      });
    };
    // A rotated token or CA in the member's Secret: read with it from now on (a failed re-read keeps the client it has).
    const recheck = (): void => {
      if (conn.stopped) return;
      memberCredential(api, c, access).then((credential) => {
        if (conn.stopped) return;
        if (credential === conn.credential) return void clock.after(recheckMs, recheck);
        log.info({ member: name }, 'member cluster Secret changed: reading it with the new one');
        connect(name, true);
      }, (err: Error) => {
        if (conn.stopped) return;
        log.warn({ member: name, err: err.message }, 'member cluster Secret not read again: the client it has is kept');
        clock.after(recheckMs, recheck);
      });
    };
    attempt();
  }

  const healthy = (conn: MemberConnection | undefined) => !!conn && conn.reflectors.length > 0 && conn.reflectors.every((r) => r.healthy());
  const { zones, ...reads } = federationReads(store, (cluster) => {
    const conn = members.get(cluster);
    return healthy(conn) ? conn!.store : undefined;
  });

  return {
    ...reads,
    ready: () => reflectors.every((r) => r.healthy()),
    synced: () => reflectors.every((r) => r.status().synced),
    members: () => store.all<SlimMemberCluster>('memberclusters').map((c) => {
      const conn = members.get(c.name);
      const bad = conn?.reflectors.map((r) => r.status()).find((s) => s.lastError && !s.watching);
      return { name: c.name, healthy: healthy(conn), error: conn?.error || bad?.lastError || (conn ? '' : 'no endpoint'), zones: zones(c) };
    }),
    onChange: (fn) => { listeners.push(fn); },
    start() {
      started = true;
      for (const r of reflectors) r.start();
      for (const name of store.keys('memberclusters')) connect(name);
    },
    async stop() {
      started = false;
      for (const m of members.values()) m.stopped = true;
      await Promise.all([...reflectors, ...[...members.values()].flatMap((m) => m.reflectors)].map((r) => r.stop()));
      members.clear();
    },
  };
}
