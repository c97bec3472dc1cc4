import { kubeApiClient } from './cluster/apiClient.js';
import type { FederationView } from './cluster/memberClusters.js';
import { federationSnapshot } from './cluster/federationSnapshot.js';
import { loadClusterAccess, type ClusterSource } from './cluster/kubeconfig.js';
import { sleepOn, systemClock } from './common/clock.js';
import type { Config } from './common/config.js';
import { createLogger } from './common/logger.js';
import { federationHouse } from './house.js';
import { createMetrics } from './metrics/metrics.js';
import { federationWatchOf } from './sourceChoice.js';

// `zonekeeper audit --karmada` (docs/user-guide.md#zonekeeper-audit-across-clusters): every binding that names zonekeeper on
// a Karmada control plane, or in a file of its objects and its members' (--snapshot), planned as the scheduler would plan it now, nothing written.

const COLUMNS = ['NAMESPACE', 'BINDING', 'REPLICAS', 'PLAN', 'UNPLACED', 'MEMBERS'] as const;

/** Karmada and its members: a file's, as written (`--snapshot`), or a control plane's, listed within `timeoutMs`. */
async function openFederation(
  source: ClusterSource | { kind: 'snapshot'; path: string }, config: Config, timeoutMs: number,
): Promise<{ view: FederationView; where: string }> {
  if (source.kind === 'snapshot') return { view: federationSnapshot(source.path), where: source.path };
  const api = kubeApiClient(loadClusterAccess(source), config.cluster);
  const view = federationWatchOf(api, config, createLogger('silent'));
  view.start();
  try {
    // Karmada listed, then each member read (or given up on: its capacity is reported unknown).
    const deadline = systemClock.now() + timeoutMs;
    while (!(view.ready() && view.members().every((m) => m.healthy)) && systemClock.now() < deadline) await sleepOn(systemClock, 100);
    if (!view.ready()) throw new Error(`the Karmada control plane ${api.server} was not listed within ${timeoutMs / 1000}s`);
  } catch (err) {
    await view.stop();
    throw err;
  }
  return { view, where: api.server };
}

/** The audit's rows and exit code: 1 when replicas are left unplaced, a preference is refused or a member cannot be read. */
export async function auditFederation(
  source: ClusterSource | { kind: 'snapshot'; path: string }, config: Config, timeoutMs: number, json: boolean, namespace?: string,
): Promise<{ output: string; code: 0 | 1 }> {
  const { view, where } = await openFederation(source, config, timeoutMs);
  const { service } = federationHouse({ view, config, metrics: createMetrics(), log: createLogger('silent') });
  try {
    const keys = service.keys().filter((k) => !namespace || k.startsWith(`${namespace}/`));
    if (keys.length === 0) {
      const others = view.bindings().filter((b) => !namespace || b.namespace === namespace).length;
      throw new Error(`no binding names zonekeeper (schedulerName ${config.karmada.schedulerName}) ${source.kind === 'snapshot' ? 'in' : 'on'} ${where}`
        + `${namespace ? ` in namespace ${namespace}` : ''}${others ? ` (bindings naming another scheduler: ${others})` : ''}`);
    }
    for (const k of keys) service.plan(k);
    const workloads = service.workloads().filter((w) => keys.includes(w.binding));
    const members = view.members();
    const atRisk = workloads.filter((w) => w.unplaced > 0 || w.outcome === 'refused').length + members.filter((m) => !m.healthy).length;
    if (json) return { output: JSON.stringify({ source: where, atRisk, members, workloads }, null, 2), code: atRisk ? 1 : 0 };
    const cells = workloads.map((w) => {
      const [ns, name] = w.binding.includes('/') ? w.binding.split('/') : ['', w.binding];
      return [ns!, name!, String(w.replicas), w.members.filter((m) => m.replicas > 0).map((m) => `${m.cluster}=${m.replicas}`).join(' ') || w.why,
        String(w.unplaced), w.members.map((m) => `${m.cluster}: ${m.why}`).join('; ')];
    });
    const widths = COLUMNS.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
    const line = (r: readonly string[]) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('   ');
    const unread = members.filter((m) => !m.healthy).map((m) => `member ${m.name} cannot be read: ${m.error || 'its watches are not healthy'}; its capacity is unknown`);
    return { output: [line(COLUMNS), ...cells.map(line), ...(unread.length ? ['', ...unread] : [])].join('\n'), code: atRisk ? 1 : 0 };
  } finally {
    await view.stop();
  }
}
