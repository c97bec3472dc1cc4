import { readFileSync } from 'node:fs';
import { slimOf } from './convert.js';
import { federationReads, KarmadaStore, type FederationView } from './memberClusters.js';
import { KARMADA_KINDS, type SlimMemberCluster } from './karmada.js';
import { MEMBER_KINDS, type KindSpec } from './kinds.js';
import { ClusterStore } from './store.js';
import { forEachDocument, isListKind, SnapshotFileError } from './source.js';
import { UnreadableFileError } from '../common/errors.js';

// A Karmada federation read from a file (`zonekeeper audit --karmada --snapshot`, docs/user-guide.md#zonekeeper-audit-across-clusters):
// Karmada's objects as `kubectl get -o yaml` prints them, and each member's nodes, pods and their owners, told apart by
// the annotation zonekeeper.io/member on each object or on the List that holds them, each member's into a ClusterStore
// of its own, as when watched. Read once; nothing watched.

/** Names the member cluster a Node or Pod of the file was read from. */
const MEMBER_ANNOTATION = 'zonekeeper.io/member';

/** How to write such a file from a real Karmada: the user guide's loop. */
const HOW_TO_WRITE_ONE = 'docs/user-guide.md#zonekeeper-audit-across-clusters says how to write one';

const KARMADA_SPECS: readonly KindSpec[] = Object.values(KARMADA_KINDS);

/** The Karmada kind of an object by its apiVersion's group and its kind. */
const karmadaKind = (apiVersion: string, kind: string) => KARMADA_SPECS.find((k) => k.wireKind === kind && apiVersion.startsWith(`${k.group}/`));

/** A member's Node, Pod, or Deployment, ReplicaSet or StatefulSet (of apps/v1: who owns a workload's pods there). */
const memberKind = (apiVersion: string, kind: string) => MEMBER_KINDS.find((k) => k.wireKind === kind && apiVersion === (k.group ? `${k.group}/${k.version}` : k.version));

const annotationOf = (o: any): string | undefined => {
  const v = o?.metadata?.annotations?.[MEMBER_ANNOTATION];
  return typeof v === 'string' && v ? v : undefined;
};

/** A federation as of a file: every member with nodes in it is read, one without is not (its capacity unknown). */
export function federationSnapshot(path: string): FederationView & { describe(): string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UnreadableFileError('--snapshot', path, err as NodeJS.ErrnoException);
  }
  const karmada = new KarmadaStore(() => {});
  const members = new Map<string, ClusterStore>();
  let notObjects = 0;
  let unnamed = 0;
  const visit = (o: any, member: string | undefined): void => {
    if (!o || typeof o !== 'object') return;
    if (Array.isArray(o)) {
      for (const item of o) visit(item, member);
      return;
    }
    if (Array.isArray(o.items) && isListKind(o.kind)) {
      for (const item of o.items) visit(item, annotationOf(o) ?? member);
      return;
    }
    const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
    if (typeof o.kind !== 'string' || !o.kind || typeof o.metadata?.name !== 'string' || !o.metadata.name) {
      notObjects++;
      return;
    }
    const k = karmadaKind(apiVersion, o.kind);
    if (k) karmada.upsert(k.plural, k.slim!(o));
    else if (memberKind(apiVersion, o.kind)) {
      const name = annotationOf(o) ?? member;
      if (!name) {
        unnamed++;
        return;
      }
      let store = members.get(name);
      if (!store) members.set(name, (store = new ClusterStore()));
      const m = memberKind(apiVersion, o.kind)!;
      store.upsert(m.plural, slimOf(m)(o));
    }
  };
  forEachDocument(text, path, (doc) => visit(doc, undefined));

  // A file that is not what it claims is refused whole: judging the rest would be a false green.
  if (notObjects > 0) throw new SnapshotFileError(`${path}: ${notObjects} of its items are not Kubernetes objects (no kind or no metadata.name); ${HOW_TO_WRITE_ONE}`);
  const clusters = karmada.all<SlimMemberCluster>('memberclusters');
  if (clusters.length === 0) throw new SnapshotFileError(`${path}: no Karmada Cluster (cluster.karmada.io) in it; ${HOW_TO_WRITE_ONE}`);
  if (unnamed > 0) throw new SnapshotFileError(`${path}: ${unnamed} nodes, pods and workloads name no member (annotation ${MEMBER_ANNOTATION}, on each or on their List); ${HOW_TO_WRITE_ONE}`);
  const strangers = [...members.keys()].filter((m) => !clusters.some((c) => c.name === m));
  if (strangers.length > 0) throw new SnapshotFileError(`${path}: nodes and pods of ${strangers.join(', ')}, which no Cluster in it names (${clusters.map((c) => c.name).join(', ')})`);

  // A member is read when the file holds its nodes; pods alone say nothing of its room.
  const read = (cluster: string) => (members.get(cluster)?.nodeCount() ? members.get(cluster) : undefined);
  const { zones, ...reads } = federationReads(karmada, read);
  return {
    ...reads,
    ready: () => true,
    synced: () => true,
    members: () => karmada.all<SlimMemberCluster>('memberclusters').map((c) => ({
      name: c.name, healthy: !!read(c.name), error: read(c.name) ? '' : `the file holds none of its nodes (annotation ${MEMBER_ANNOTATION}: ${c.name})`, zones: zones(c),
    })),
    onChange: () => {},
    start: () => {},
    stop: async () => {},
    describe: () => path,
  };
}
