import type { SlimNode, SlimPod, SlimScaleReport, SlimWorkload } from './objects.js';
import type { PodListener } from './snapshot.js';

type NodeListener = (before: SlimNode | undefined, after: SlimNode | undefined) => void;
type ClaimListener = (namespace: string, claim: string) => void;

/**
 * Who is told of which change the store takes in, in the order they asked. Each list is told
 * after the indexed objects and the derived caches have the change, so a listener reads them
 * as they are now.
 */
export class ChangeListeners {
  private readonly pods: PodListener[] = [];
  private readonly workloads: ((w: SlimWorkload) => void)[] = [];
  private readonly nodes: NodeListener[] = [];
  private readonly reports: ((r: SlimScaleReport) => void)[] = [];
  private readonly claims: ClaimListener[] = [];
  private readonly classes: (() => void)[] = [];

  /** Called with the claim a PVC or PV written is about (a claim created or bound, a PV reserved for it). */
  onClaim(listener: ClaimListener): void { this.claims.push(listener); }
  /** Called when a StorageClass is written or removed (which class is the default may have changed). */
  onStorageClass(listener: () => void): void { this.classes.push(listener); }
  /** Called with each autoscaler report written (a new or repeated refusal for a pod). */
  onScaleReport(listener: (r: SlimScaleReport) => void): void { this.reports.push(listener); }
  /** Called with each pod written ('upsert') and each pod removed ('delete', its last cached version). */
  onPod(listener: PodListener): void { this.pods.push(listener); }
  /** Called with a node's cached version before and after each change (undefined: absent). */
  onNode(listener: NodeListener): void { this.nodes.push(listener); }
  /** Called with each workload written or removed (its last cached version). */
  onWorkload(listener: (w: SlimWorkload) => void): void { this.workloads.push(listener); }

  claimChanged(namespace: string, claim: string): void { for (const l of this.claims) l(namespace, claim); }
  storageClassChanged(): void { for (const l of this.classes) l(); }
  scaleReported(report: SlimScaleReport): void { for (const l of this.reports) l(report); }
  podChanged(type: 'upsert' | 'delete', pod: SlimPod): void { for (const l of this.pods) l(type, pod); }
  nodeChanged(before: SlimNode | undefined, after: SlimNode | undefined): void { for (const l of this.nodes) l(before, after); }
  workloadChanged(w: SlimWorkload): void { for (const l of this.workloads) l(w); }
}
