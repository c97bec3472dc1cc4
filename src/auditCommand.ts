import { basename, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { kubeApiClient, type ApiClient } from './cluster/apiClient.js';
import { loadClusterAccess } from './cluster/kubeconfig.js';
import { isDnsLabel } from './cluster/names.js';
import { fileSource, type SnapshotSource } from './cluster/source.js';
import { ConfigError, loadConfig } from './common/config.js';
import { Reservations } from './decision/reservationLedger.js';
import { UnreadableFileError } from './common/errors.js';
import { createLogger } from './common/logger.js';
import { NO_PENDING_FREEZES } from './placement/fleet.js';
import { fleetHealth, type WorkloadHealth } from './placement/health.js';
import { chooseSource, clusterWatch } from './sourceChoice.js';
import { auditPolicy, auditPolicyText } from './auditPolicy.js';
import { subsetPatchShortfalls, subsetPatchShortfallText } from './auditSubsetPatches.js';
import { sleepOn, systemClock } from './common/clock.js';

export const AUDIT_USAGE = `zonekeeper audit: which workloads fill fewer zones than they should (read-only)

Usage:
  zonekeeper audit [--kubeconfig FILE | --snapshot FILE] [-n NAMESPACE] [-o table|json] [--config FILE]
  kubectl zonekeeper audit [...]

  --kubeconfig FILE   the cluster of this kubeconfig's current context (else $KUBECONFIG,
                      ~/.kube/config, the in-cluster service account)
  --snapshot FILE     a file of objects instead, as 'kubectl get nodes,pods,pv,pvc,sc,sts,rs,deploy -A -o json'
                      prints it (add workloadspreads,clonesets where OpenKruise is installed); YAML is
                      read too, ~20x slower
  -n, --namespace NS  one namespace (default: all)
  -o, --output FMT    table (default) or json
  --config FILE       zonekeeper.yaml: the placement and health options to judge by (defaults otherwise)
  --timeout SECONDS   how long listing the cluster may take (default 120)
  --karmada           the kubeconfig is a Karmada control plane: every ResourceBinding that names
                      zonekeeper, planned now (replicas per member and why), nothing written; with
                      --snapshot, a file of Karmada's objects and each member's nodes and pods, each
                      annotated zonekeeper.io/member: NAME (try config/demo-federation.yaml)

Every StatefulSet and every workload with zonekeeper's annotations (or a WorkloadSpread) is
judged, whether or not zonekeeper is installed. Against a cluster, it says too whether the API
server serves MutatingAdmissionPolicies (Kubernetes 1.36+, the policy transport) and which
namespaces hold a seat table, with how many StatefulSets each covers. Pods the zone gate decided
after their creation that lack part of their WorkloadSpread subset's patch are listed under it.
Under the table, how to see why, pod by pod, and the command that fixes it: /debug/explain of
'zonekeeper serve --snapshot', read-only.
Exit status: 0 none at risk, 1 some at risk, 2 error: also when there is no workload to judge,
or the file holds items that are not Kubernetes objects (no kind or no metadata.name).
`;

export class AuditError extends Error {}

/** A usage error of the audit's flags: said with where its help is. */
export class AuditUsageError extends AuditError {}

const COLUMNS = ['NAMESPACE', 'NAME', 'KIND', 'REPLICAS', 'ZONES', 'WANTED', 'OFF-PIN', 'AT-RISK', 'REASON'] as const;

/** kubectl's table: columns padded to their widest cell, three spaces apart. */
function auditTable(rows: readonly WorkloadHealth[]): string {
  const cells = rows.map((h) => [h.ref.namespace, h.ref.name, h.ref.kind, String(h.replicas), String(h.zones), String(h.wanted), String(h.offPin), h.atRisk ? 'yes' : 'no', h.reason]);
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('   ');
  return [line(COLUMNS), ...cells.map(line)].join('\n');
}

/** Pods named under the table, with the command that explains each. */
const EXPLAINED_PODS = 5;

/**
 * The admin address the hint's `serve` is given: a port of its own, since the demo (`npm start`) may hold
 * 9090, and a file's serve left at the default would move to a free port the curls do not name.
 */
const EXPLAIN_ADMIN = '127.0.0.1:19091';

/** This CLI as the user ran it: `zonekeeper` from the PATH, npx's or kubectl's plugin, else `node` and its path. */
function selfCommand(script = process.argv[1] ?? ''): string {
  if (basename(script) === 'kubectl-zonekeeper') return 'kubectl zonekeeper';
  if (basename(script) === 'zonekeeper') return script.includes('/node_modules/.bin/') ? 'npx zonekeeper' : 'zonekeeper';
  return `node ${relative(process.cwd(), script) || script}`;
}

/** Under the table: where each at-risk workload's off-seat pods are explained, read-only (`serve --snapshot`, /debug/explain). */
function explainHint(health: readonly WorkloadHealth[], snapshot: string | undefined): string {
  const pods = health.filter((h) => h.atRisk).flatMap((h) => h.offPinPods.map((p) => `${h.ref.namespace}/${p.pod}`));
  if (health.every((h) => !h.atRisk)) return '';
  const serve = `${selfCommand()} serve --snapshot ${snapshot ?? 'cluster.json'} --admin-listen ${EXPLAIN_ADMIN}`;
  const port = EXPLAIN_ADMIN.split(':')[1];
  return ['', '', 'Why, pod by pod, and the command that fixes it (read-only: nothing is written):',
    `  ${snapshot ? '' : 'kubectl get nodes,pods,pv,pvc,sc,sts,rs,deploy -A -o json > cluster.json && '}${serve}`,
    ...pods.slice(0, EXPLAINED_PODS).map((pod) => `  curl -s 'localhost:${port}/debug/explain?pod=${pod}' | jq -r '.explanation[]'`),
    `  or open http://localhost:${port}/ui${pods.length > EXPLAINED_PODS ? ` (${pods.length - EXPLAINED_PODS} more pods off their seat)` : ''}`].join('\n');
}

/** How long the first request to the API server may take before the audit gives up. */
const REACH_SECONDS = 10;

/** One GET /version: refused, unresolvable or timed out is an AuditError naming the server. */
async function reachable(api: ApiClient, timeoutMs: number): Promise<void> {
  try {
    await api.request('GET', '/version', { timeoutMs });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
    throw new AuditError(`cannot reach the API server ${api.server}: ${cause ?? (err as Error).message}`);
  }
}

async function synced(source: SnapshotSource, timeoutMs: number): Promise<void> {
  const deadline = systemClock.now() + timeoutMs;
  while (!source.synced()) {
    if (systemClock.now() > deadline) {
      const failing = source.status().kinds.filter((k) => k.required && !k.synced).map((k) => `${k.kind}${k.lastError ? ` (${k.lastError})` : ''}`);
      throw new AuditError(`the cluster was not listed within ${timeoutMs / 1000}s: ${failing.join('; ') || 'unknown'}`);
    }
    await sleepOn(systemClock, 50);
  }
}

/** Runs the audit; the output and exit status (0 none at risk, 1 some; errors throw). */
export async function runAudit(argv: string[]): Promise<{ output: string; code: 0 | 1 }> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' }, snapshot: { type: 'string' }, namespace: { type: 'string', short: 'n' },
        output: { type: 'string', short: 'o', default: 'table' }, config: { type: 'string' }, timeout: { type: 'string', default: '120' },
        karmada: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new AuditUsageError((err as Error).message);
  }
  if (values.output !== 'table' && values.output !== 'json') throw new AuditUsageError(`--output: expected table or json, not ${values.output}`);
  if (values.namespace !== undefined && !isDnsLabel(values.namespace)) throw new AuditUsageError(`--namespace: ${values.namespace} is not a namespace name`);
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new AuditUsageError('--timeout: expected seconds > 0');
  let config;
  try {
    config = loadConfig(values.config);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UnreadableFileError) throw new AuditError(err.message);
    throw err;
  }
  let choice;
  try {
    choice = chooseSource({ snapshot: values.snapshot, kubeconfig: values.kubeconfig });
  } catch (err) {
    throw new AuditError((err as Error).message);
  }
  if (choice.kind === 'demo') throw new AuditUsageError('no cluster: pass --kubeconfig or --snapshot (no $KUBECONFIG, no ~/.kube/config, not in a cluster)');
  if (values.karmada) {
    const { auditFederation } = await import('./auditFederation.js');
    try {
      return await auditFederation(choice, config, timeout * 1000, values.output === 'json', values.namespace);
    } catch (err) {
      throw new AuditError((err as Error).message);
    }
  }

  let source: SnapshotSource;
  let api: ApiClient | undefined;
  try {
    if (choice.kind === 'snapshot') {
      const file = fileSource(choice.path);
      // A file of templated or hand-cut objects is wrong as a whole: judging the rest would be a false green.
      if (file.loaded.notObjects > 0) {
        throw new AuditError(`--snapshot ${choice.path}: ${file.loaded.notObjects} of its items are not Kubernetes objects (no kind or no metadata.name); `
          + "audit reads what 'kubectl get -o yaml' or '-o json' prints");
      }
      source = file;
    } else {
      api = kubeApiClient(loadClusterAccess(choice), config.cluster);
      // Lists once; nothing is written, and nothing is logged unless it fails.
      source = clusterWatch(api, config.cluster, createLogger('silent'), () => {});
    }
  } catch (err) {
    throw new AuditError((err as Error).message);
  }
  // An API server that cannot be reached fails at once, in one message, as kubectl does; one
  // that answers but lists slowly gets the whole --timeout.
  if (api) await reachable(api, Math.min(timeout, REACH_SECONDS) * 1000);
  source.start();
  try {
    await synced(source, timeout * 1000);
    const state = {
      settings: { ...config.placement }, reservations: new Reservations(config.placement.reservationTtlSeconds),
      pendingFreezes: NO_PENDING_FREEZES, unschedulableSubsets: new Map<string, number>(),
    };
    const health = fleetHealth(source.snapshot, state, {
      now: systemClock.now(), settleSeconds: config.health.settleSeconds, rollout: config.zoneRollout.enabled ? config.zoneRollout : undefined,
    }, values.namespace);
    if (health.length === 0) {
      const where = values.namespace ? `namespace ${values.namespace} of ${source.describe()}` : source.describe();
      throw new AuditError(`no workloads to judge in ${where}: no StatefulSet, and no workload with zonekeeper's annotations or a WorkloadSpread`);
    }
    const atRisk = health.filter((h) => h.atRisk).length;
    // A cluster's policy transport (a file holds no discovery): under the table, or `policy` in JSON.
    const policy = api ? await auditPolicy(api, config.policy.configMapName, values.namespace) : undefined;
    // Pods the gate decided after their creation, without part of their subset's patch: listed, not at risk.
    const patches = subsetPatchShortfalls(source.snapshot, state.settings, values.namespace);
    const extra = { ...(policy ? { policy } : {}), ...(patches.length > 0 ? { subsetPatchesNotApplied: patches } : {}) };
    const output = values.output === 'json'
      ? JSON.stringify({ source: source.describe(), atRisk, workloads: health, ...extra }, null, 2)
      : auditTable(health) + explainHint(health, choice.kind === 'snapshot' ? choice.path : undefined) + (policy ? `\n\n${auditPolicyText(policy, config.policy.configMapName)}` : '')
        + (patches.length > 0 ? `\n\n${subsetPatchShortfallText(patches)}` : '');
    return { output, code: atRisk > 0 ? 1 : 0 };
  } finally {
    await source.stop();
  }
}
