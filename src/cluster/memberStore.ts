import { controllerOf } from './convert.js';
import { CORE_KINDS, POD_KIND, WORKLOAD_KINDS, type KindName, type KindSpec } from './kinds.js';
import type { OwnerRef, SlimNode, SlimPod } from './objects.js';
import { str, type Raw } from './rawFields.js';
import type { ReflectorStore } from './reflector.js';

// One member cluster as zonekeeper reads it (docs/design.md#across-clusters): its nodes and pods, and of its
// Deployments, ReplicaSets and StatefulSets only who owns whom. A pod counts for a workload only through an
// owner chain that is real in that member: a pod's ownerReference alone is anyone's to write.

/** A Deployment, ReplicaSet or StatefulSet of a member: its identity and its controller, nothing else. */
interface OwnerLink { namespace: string; name: string; uid: string; owner: OwnerRef | undefined }

const ownerLink = (o: Raw): OwnerLink => {
  const meta: Raw = o.metadata ?? {};
  return { namespace: str(meta.namespace), name: str(meta.name), uid: str(meta.uid), owner: controllerOf(meta) };
};
const linkKind = (k: KindSpec): KindSpec => ({ ...k, slim: ownerLink });

/** What zonekeeper watches in each member: nodes, pods, and the owners a workload's pods are checked against. */
export const MEMBER_KINDS: readonly KindSpec[] = [
  CORE_KINDS.find((k) => k.plural === 'nodes')!, POD_KIND,
  linkKind(WORKLOAD_KINDS.Deployment), linkKind(WORKLOAD_KINDS.ReplicaSet), linkKind(WORKLOAD_KINDS.StatefulSet),
];

/** The workload kinds whose pods a member's reading holds; any other kind's pods count for none there. */
const LINKED: readonly KindName[] = ['deployments', 'replicasets', 'statefulsets'];

type Usage = { cpuMilli: number; memory: number; pods: number };

/** One member's nodes and pods, with what pods take from each node, the pods of each controller and the owner links. */
export class MemberStore implements ReflectorStore {
  readonly nodes = new Map<string, SlimNode>();
  readonly pods = new Map<string, SlimPod>();
  readonly used = new Map<string, Usage>();
  /** Bumped on every node change: what is cached per node set (which nodes a workload fits) keys on it. */
  nodesVersion = 0;
  private readonly links = new Map<KindName, Map<string, OwnerLink>>(LINKED.map((k) => [k, new Map()]));
  /** Pods (and ReplicaSets) by their controller, `namespace/Kind/name`. */
  private readonly byOwner = new Map<string, Set<string>>();
  constructor(private readonly changed: () => void) {}
  keyOf(kind: KindName, obj: any): string { return kind === 'nodes' ? obj.name : `${obj.namespace}/${obj.name}`; }
  upsert(kind: KindName, obj: unknown): void {
    if (kind === 'nodes') {
      this.nodes.set((obj as SlimNode).name, obj as SlimNode);
      this.nodesVersion++;
    } else if (kind === 'pods') {
      const p = obj as SlimPod;
      const key = this.keyOf(kind, p);
      this.forget(key);
      this.pods.set(key, p);
      this.take(p, 1);
      this.index(`pod ${key}`, p, 1);
    } else {
      const l = obj as OwnerLink;
      const key = this.keyOf(kind, l);
      this.forgetLink(kind, key);
      this.links.get(kind)?.set(key, l);
      if (kind === 'replicasets') this.index(`rs ${key}`, l, 1);
    }
    this.changed();
  }

  delete(kind: KindName, key: string): void {
    if (kind === 'nodes') {
      this.nodes.delete(key);
      this.nodesVersion++;
    } else if (kind === 'pods') this.forget(key);
    else this.forgetLink(kind, key);
    this.changed();
  }

  keys(kind: KindName): Iterable<string> {
    return kind === 'nodes' ? this.nodes.keys() : kind === 'pods' ? this.pods.keys() : (this.links.get(kind)?.keys() ?? []);
  }

  private forget(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.take(old, -1);
    this.index(`pod ${key}`, old, -1);
  }

  private forgetLink(kind: KindName, key: string): void {
    const old = this.links.get(kind)?.get(key);
    if (!old) return;
    this.links.get(kind)!.delete(key);
    if (kind === 'replicasets') this.index(`rs ${key}`, old, -1);
  }

  /** Files `entry` under its controller (sign 1), or takes it out (-1). */
  private index(entry: string, o: { namespace: string; owner: OwnerRef | undefined }, sign: -1 | 1): void {
    if (!o.owner) return;
    const owner = `${o.namespace}/${o.owner.kind}/${o.owner.name}`;
    let s = this.byOwner.get(owner);
    if (sign > 0) {
      if (!s) this.byOwner.set(owner, (s = new Set()));
      s.add(entry);
      return;
    }
    s?.delete(entry);
    if (s?.size === 0) this.byOwner.delete(owner);
  }

  private take(p: SlimPod, sign: 1 | -1): void {
    if (!p.nodeName || p.finished) return;
    const u = this.used.get(p.nodeName) ?? { cpuMilli: 0, memory: 0, pods: 0 };
    const next = { cpuMilli: u.cpuMilli + sign * p.cpuMilli, memory: u.memory + sign * p.memory, pods: u.pods + sign };
    if (next.pods <= 0) this.used.delete(p.nodeName);
    else this.used.set(p.nodeName, next);
  }

  /** The pods (or ReplicaSets) `owner` controls in this member: those whose controller reference carries its uid. */
  private controlled(kind: string, owner: OwnerLink, what: 'pod' | 'rs'): string[] {
    const keys = [...(this.byOwner.get(`${owner.namespace}/${kind}/${owner.name}`) ?? [])].filter((e) => e.startsWith(`${what} `)).map((e) => e.slice(what.length + 1));
    const of = (k: string) => (what === 'pod' ? this.pods.get(k) : this.links.get('replicasets')!.get(k));
    return keys.filter((k) => of(k)?.owner?.uid === owner.uid);
  }

  /**
   * A StatefulSet's pods, or a Deployment's through the ReplicaSets it controls, each link checked by uid in this
   * member; none for another kind (nothing here to check its pods against) or a workload the member does not hold.
   */
  ownedBy(kind: string, namespace: string, name: string): SlimPod[] {
    const key = `${namespace}/${name}`;
    let podKeys: string[] = [];
    if (kind === 'StatefulSet') {
      const sts = this.links.get('statefulsets')!.get(key);
      if (sts) podKeys = this.controlled('StatefulSet', sts, 'pod');
    } else if (kind === 'Deployment') {
      const deployment = this.links.get('deployments')!.get(key);
      const sets = deployment ? this.controlled('Deployment', deployment, 'rs').map((k) => this.links.get('replicasets')!.get(k)!) : [];
      podKeys = sets.flatMap((rs) => this.controlled('ReplicaSet', rs, 'pod'));
    }
    return podKeys.map((k) => this.pods.get(k)!);
  }
}
