import type { WorkloadKind } from '../cluster/kinds.js';
import type { SnapshotSource } from '../cluster/source.js';
import type { WorkloadHealth } from '../placement/healthRecord.js';
import { LAYOUT_PODS_PER_ANSWER, managedLayouts, workloadLayout, type WorkloadLayout } from '../placement/layout.js';
import type { Candidates } from '../placement/policy.js';
import { workloadKey } from '../placement/workload.js';
import { zonesShown } from '../placement/zones.js';
import { disruptionState } from '../placement/zoneDisruption.js';
import type { DisruptionState } from '../placement/healthRecord.js';
import type { DecisionRecord } from './decisions.js';
import type { PinConflict } from './placementState.js';
import type { DecisionCore } from './core.js';
import type { DecisionRecorder } from './recording.js';
import { explainSeat, type SeatExplanation } from './seatExplanation.js';
import { subsetPatchExplained, type SubsetPatchExplained } from './gatedSubsetPatch.js';

/** A workload's layout with the pin conflicts seen for it. */
type LayoutWithConflicts = WorkloadLayout & { conflicts: PinConflict[] };

/** A dry-run filter: the decision, why each node failed, the zones the workload can use, and the pod against its seat. */
export type Explained = DecisionRecord & SeatExplanation & {
  failed: Record<string, string>;
  /** The zone list; `unusable`: listed zones no node fits the pods in; `excluded`: the cluster's other zones the pods cannot use. */
  zones?: { list: string[]; unusable: string[]; excluded: string[] };
  /** Its workload opted in to the zone disruption budget: the zones with seats down now, and the last eviction of this pod judged. */
  disruption?: DisruptionState & { lastEviction?: Pick<DecisionRecord, 'at' | 'outcome' | 'summary'> };
  /** Part of its WorkloadSpread subset's patch not applied (or not to be), and the setting that would apply it. */
  subsetPatch?: SubsetPatchExplained;
};

/** Subset patches: zonekeeper owns WorkloadSpreads (`owned`), and the setting under which admission would apply them whole (gatedSubsetPatch.ts). */
export interface PatchContext { owned: boolean; setting?: string }

/** What the admin routes read of the decisions: the debug views. */
export interface DebugViews {
  /** A dry-run filter of a cached pod against every cached node; undefined for a pod not cached. */
  explain(namespace: string, name: string): Explained | undefined;
  /** The last decisions about a pod (`namespace/name`). */
  decisionsFor(pod: string): DecisionRecord[];
  /** /debug/workloads: one cached workload's layout, or undefined. */
  workloadLayout(kind: WorkloadKind, namespace: string, name: string): LayoutWithConflicts | undefined;
  /** /debug/layouts: every managed workload (of one namespace), within the answer's budget. */
  layouts(namespace: string | undefined,
    healthOf?: (key: string) => WorkloadHealth | undefined): { layouts: LayoutWithConflicts[]; more: number; podsPerAnswer: number };
  /** Reservations held now. */
  reservationCount(): number;
}

/** The debug views over the decision service and the cache: nothing reserved or written. */
export function debugViews(
  core: DecisionCore, recorder: DecisionRecorder, source: SnapshotSource, rebalanceEnabled: boolean, patches: PatchContext = { owned: false },
): DebugViews {
  const { state } = core;
  return {
    explain(namespace, name) {
      const raw = source.snapshot.pod(namespace, name);
      if (!raw) return undefined;
      const all = [...source.snapshot.nodes()];
      const candidates: Candidates = { names: all.map((n) => n.name), nodes: all };
      // The instance ID it holds or this process gave it, as the filter would see it; nothing claimed.
      const v = core.decideNow(raw, { names: candidates.names, resolve: () => candidates }).verdict;
      const failed: Record<string, string> = {};
      for (const [r, names] of v.rejected) for (const n of names) failed[n] = `${r.rule}: ${r.reason}`;
      const zones = v.model && v.model.policy !== 'none' && v.model.policy !== 'wait' ? zonesShown(v.model.zones(), source.snapshot) : undefined;
      const record = recorder.recordOf('explain', { namespace, name, uid: raw.uid }, v);
      // An opted-in workload no policy places is judged all the same: its disruption is shown too.
      const judged = v.model && v.model.policy !== 'wait' ? v.model : undefined;
      const down = judged?.workload && disruptionState(judged, judged.workload, source.snapshot);
      const last = recorder.decisionsFor(`${namespace}/${name}`).findLast((d) => d.verb === 'eviction');
      const disruption = down && { ...down, ...(last ? { lastEviction: { at: last.at, outcome: last.outcome, summary: last.summary } } : {}) };
      const seat = explainSeat(raw, v.model, source.snapshot, state.settings, { passed: v.passed, summary: v.summary },
        { rebalanceEnabled, fromFile: source.fromFile === true });
      const subsetPatch = subsetPatchExplained(raw, v.subset, patches.owned, patches.setting);
      // Said before the fixes, which end the explanation (explainPage.ts).
      if (subsetPatch) seat.explanation.splice(seat.explanation.length - seat.fixes.length, 0, subsetPatch.sentence);
      return {
        ...record, nodes: all.length, passed: { count: v.passed.length, sample: [...v.passed] }, failed, zones, ...seat,
        ...(disruption ? { disruption } : {}), ...(subsetPatch ? { subsetPatch } : {}),
      };
    },
    decisionsFor: recorder.decisionsFor,
    reservationCount: () => state.reservations.size(),
    workloadLayout(kind, namespace, name) {
      const layout = workloadLayout(source.snapshot, kind, namespace, name, state);
      if (!layout) return undefined;
      const key = workloadKey({ kind, namespace, name });
      return { ...layout, conflicts: state.conflicts().filter((x) => x.workload === key) };
    },
    layouts(namespace, healthOf) {
      const { layouts, more } = managedLayouts(source.snapshot, state, namespace, undefined, undefined, healthOf);
      const conflicts = state.conflicts();
      return {
        more, podsPerAnswer: LAYOUT_PODS_PER_ANSWER,
        layouts: layouts.map((l) => ({ ...l, conflicts: conflicts.filter((x) => x.workload === workloadKey(l.workload)) })),
      };
    },
  };
}
