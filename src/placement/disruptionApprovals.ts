// The eviction gate's record on a workload (`zonekeeper.io/disruption-approvals`), as a
// PodDisruptionBudget's status.disruptedPods: which evictions it let go, in which zone, when;
// bounded as the disruption controller bounds that map (docs/design.md#the-zone-disruption-budget).

/** What approvals are judged against: the seat map's holders, down seats by zone and unplaced replicas (zoneDisruption.ts). */
interface SeatMap {
  holders: ReadonlyMap<string, { pod: { uid: string }; available: boolean }>;
  zones: ReadonlyMap<string, { down: readonly unknown[] }>;
  unplaced: { count: number } | undefined;
}

/** An approval the eviction gate recorded on the workload before answering: the pod, its zone, when. */
export interface Approval { pod: string; uid: string; zone: string; at: number }

/**
 * The record's bounds: past them an eviction is refused (eviction.go refuses past 2,000
 * disruptedPods). 100 KiB leaves room under the API server's 256 KiB for a workload's other annotations.
 */
const MAX_APPROVALS = 1000;
const MAX_APPROVAL_BYTES = 100 * 1024;

/** Approvals read back from the workload's annotation: what is not one is dropped, the newest MAX_APPROVALS kept. */
export function parseApprovals(text: string | undefined): Approval[] {
  if (!text) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: Approval[] = [];
  // The newest last, as they are written: a hand-written record longer than the bound keeps its newest.
  for (const a of raw.slice(-MAX_APPROVALS)) {
    if (typeof a !== 'object' || a === null) continue;
    const { pod, uid, zone, at } = a as Record<string, unknown>;
    const when = typeof at === 'string' ? Date.parse(at) : NaN;
    if (typeof pod === 'string' && typeof uid === 'string' && typeof zone === 'string' && Number.isFinite(when)) out.push({ pod, uid, zone, at: when });
  }
  return out;
}

export function formatApprovals(approvals: readonly Approval[]): string {
  return JSON.stringify(approvals.map((a) => ({ pod: a.pod, uid: a.uid, zone: a.zone, at: new Date(a.at).toISOString() })));
}

/** Why a record may not be written (past its bounds), or undefined. */
export function approvalsOverBound(approvals: readonly Approval[]): string | undefined {
  const bytes = Buffer.byteLength(formatApprovals(approvals));
  if (approvals.length <= MAX_APPROVALS && bytes <= MAX_APPROVAL_BYTES) return undefined;
  return `${approvals.length} approvals (${Math.ceil(bytes / 1024)} KiB), more than its bound of ${MAX_APPROVALS} or ${MAX_APPROVAL_BYTES / 1024} KiB`;
}

/** Whether the approval's pod still stands, unharmed, in the cache: the same UID holding its seat. */
export const standing = (a: Approval, map: SeatMap) => map.holders.get(a.pod)?.pod.uid === a.uid;

/**
 * Approvals whose pod the cache shows standing after `approvalMs`: they lapse (a PDB refused that
 * eviction, its client gave up) once a live read confirms the pod stands (docs/design.md#clocks-and-the-cache).
 * A time ahead of this clock (another holder's skew, a hand-written record) counts from now.
 */
export function lapsing(approvals: readonly Approval[], map: SeatMap, now: number, approvalMs: number): Approval[] {
  return approvals.filter((a) => standing(a, map) && !(now - Math.min(a.at, now) < approvalMs && a.at <= now + approvalMs));
}

/**
 * The approvals still in force: one whose pod stands, until it lapses (`lapseConfirmed`: a live
 * read saw it stand); one whose pod went holds its zone until that zone has nothing down and no
 * replica is unplaced, and not once a successor of the same name is available. Per zone, the
 * newest are kept, at most as many as the seats it has down and the replicas unplaced.
 */
export function liveApprovals(approvals: readonly Approval[], map: SeatMap, now: number, approvalMs: number,
  lapseConfirmed: (a: Approval) => boolean = () => true): Approval[] {
  const expired = new Set(lapsing(approvals, map, now, approvalMs));
  const room = new Map<string, number>();
  const unplaced = map.unplaced?.count ?? 0;
  const kept: Approval[] = [];
  for (const a of [...approvals].reverse()) {
    if (standing(a, map)) {
      if (!expired.has(a) || !lapseConfirmed(a)) kept.push(a);
      continue;
    }
    if (map.holders.get(a.pod)?.available) continue;
    const left = room.get(a.zone) ?? (map.zones.get(a.zone)?.down.length ?? 0) + unplaced;
    if (left <= 0) continue;
    room.set(a.zone, left - 1);
    kept.push(a);
  }
  return kept.reverse();
}
