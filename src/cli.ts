#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

// Each command loads its own modules: `plan` and `audit` need none of the server's.

export const USAGE = `zonekeeper: keeps replicated workloads spread across zones (admission webhook, scheduling gate,
kube-scheduler extender), and schedules Karmada's bindings across member clusters

Usage:
  zonekeeper serve [flags]
  zonekeeper plan --replicas N --zones A,B,C [...]   (zonekeeper plan --help)
  zonekeeper audit [--kubeconfig FILE | --snapshot FILE] [-n NS] [-o json]   (zonekeeper audit --help)
  zonekeeper karmada [flags]   (zonekeeper karmada --help)
  zonekeeper --version
  zonekeeper --help

serve flags:
  --config FILE          zonekeeper.yaml with the options (see config/zonekeeper.yaml); defaults apply without it
  --kubeconfig FILE      watch the cluster of this kubeconfig's current context
  --snapshot FILE        serve decisions from a file of Kubernetes objects (a List, as
                         'kubectl get nodes,pods,pv,pvc,sc,sts,rs,deploy -A -o json' prints it (add workloadspreads where served),
                         or multi-document YAML, ~20x slower to read): offline replay of a real cluster
  --demo                 serve the bundled demo cluster (config/demo-cluster.yaml)
  --listen HOST:PORT     extender listener (default 127.0.0.1:8888; overrides extender.listen)
  --admin-listen HOST:PORT
                         admin listener: /healthz /readyz /metrics /debug/... (default 127.0.0.1:9090);
                         off loopback it needs --admin-authorization kubernetes
  --admin-authorization none|kubernetes
                         kubernetes: /metrics and /debug/* need a bearer token that the API server accepts
                         (TokenReview) and authorizes for the path (SubjectAccessReview) (admin.authorization)
  --probe-listen HOST:PORT
                         a listener with /healthz and /readyz only, for kubelet probes (admin.probeListen)
  --picker-listen HOST:PORT
                         serve the KEP-3189 pod picker alone on this listener, for other controllers;
                         callers need a token the API server accepts and may post the path (picker.listen)
  --picker-tls-cert FILE, --picker-tls-key FILE
                         serve that listener over HTTPS (picker.tls)
  --admission-listen HOST:PORT
                         serve the mutating webhook for pod CREATE on this HTTPS listener (admission.listen)
  --admission-secret NAMESPACE/NAME, --admission-webhook NAME, --admission-dns-name NAME,
  --admission-eviction-webhook NAME, --admission-conversion-crd NAME
                         the certificate zonekeeper keeps in that Secret, the MutatingWebhookConfiguration
                         it writes the caBundle into, the name the API server calls it by, the
                         eviction gate's ValidatingWebhookConfiguration, and the CRD whose conversion
                         webhook it serves (zonekeeper's WorkloadSpread CRD) (admission.certificate)
  --manage-deletion-cost keep controller.kubernetes.io/pod-deletion-cost on managed ReplicaSet pods,
                         so scale-down follows the pod picker's order (deletionCost.enabled)
  --policy-seat-table    Kubernetes 1.36+: publish each namespace's StatefulSet seats for the
                         MutatingAdmissionPolicy of manifests/components/policy (policy.seatTable)
  --workloadspread-status
                         standalone mode: write WorkloadSpread status as OpenKruise's controller would
                         (workloadSpread.writeStatus)
  -h, --help             this text

Where the cluster comes from, first found wins: --snapshot, --demo, --kubeconfig, $KUBECONFIG,
~/.kube/config, the in-cluster service account; the demo cluster when none of these is found.
`;

const KARMADA_USAGE = `zonekeeper karmada: the scheduler of the Karmada ResourceBindings and ClusterResourceBindings whose
policy names zonekeeper (spec.schedulerName: zonekeeper); karmada-scheduler keeps every other binding.

Usage:
  zonekeeper karmada [--kubeconfig FILE] [--config FILE] [--admin-listen HOST:PORT]

Flags:
  --kubeconfig FILE      the Karmada control plane (karmada-apiserver), not a member; else $KUBECONFIG,
                         ~/.kube/config, in-cluster (in-cluster is the host cluster: pass the Karmada kubeconfig)
  --config FILE          zonekeeper.yaml: the karmada.* options (schedulerName, memberAccess, ordinalStride, ...)
  --admin-listen HOST:PORT
                         /healthz /readyz /metrics /ui /debug/federation /debug/explain?binding=NS/NAME
                         (default 127.0.0.1:9090)
  -h, --help             this text

It needs, on the Karmada control plane, the grants of manifests/karmada/rbac.yaml (its Lease is
zonekeeper-system/zonekeeper-karmada unless leaderElection names another; /readyz fails while the API
server refuses it), and in each member those of manifests/karmada/member-rbac.yaml (members are read
through Karmada's cluster proxy). Opting in, moving off, and what each placement gets: docs/operations.md#across-clusters-karmada.
`;

function fail(message: string, code = 2): never {
  process.stderr.write(`zonekeeper: ${message}\n`);
  process.exit(code);
}

/** A usage error: one line, and where the help is. */
function usage(message: string, help = 'zonekeeper --help'): never {
  fail(`${message} (see '${help}')`);
}

/** The version of the package this program was installed from. */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function serve(argv: string[]): Promise<void> {
  const { ConfigError, hostPortProblem, LISTENER_SETTINGS, loadConfig, parseConfig } = await import('./common/config.js');
  const { createLogger } = await import('./common/logger.js');
  const { chooseSource, startServer } = await import('./main.js');
  const { UnreadableFileError } = await import('./common/errors.js');
  const { ListenError } = await import('./server/listen.js');
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' }, kubeconfig: { type: 'string' }, snapshot: { type: 'string' },
        demo: { type: 'boolean' }, listen: { type: 'string' }, 'admin-listen': { type: 'string' }, help: { type: 'boolean', short: 'h' },
        'admin-authorization': { type: 'string' }, 'probe-listen': { type: 'string' },
        'manage-deletion-cost': { type: 'boolean' }, 'workloadspread-status': { type: 'boolean' },
        'picker-listen': { type: 'string' }, 'picker-tls-cert': { type: 'string' }, 'picker-tls-key': { type: 'string' },
        'admission-listen': { type: 'string' }, 'admission-secret': { type: 'string' }, 'admission-webhook': { type: 'string' },
        'admission-eviction-webhook': { type: 'string' }, 'admission-conversion-crd': { type: 'string' },
        'admission-dns-name': { type: 'string', multiple: true }, 'policy-seat-table': { type: 'boolean' },
      },
      strict: true, allowPositionals: false,
    }));
  } catch (err) {
    usage((err as Error).message, 'zonekeeper serve --help');
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  for (const { flag } of Object.values(LISTENER_SETTINGS)) {
    const value = values[flag.slice(2) as keyof typeof values];
    const problem = typeof value === 'string' ? hostPortProblem(value) : undefined;
    if (problem) usage(`${flag} ${value}: ${problem}`, 'zonekeeper serve --help');
  }
  let config;
  try {
    config = loadConfig(values.config);
    const picker = values['picker-listen'] !== undefined || values['picker-tls-cert'] !== undefined || values['picker-tls-key'] !== undefined;
    const admission = values['admission-listen'] !== undefined || values['admission-secret'] !== undefined || values['admission-webhook'] !== undefined
      || values['admission-dns-name'] !== undefined || values['admission-eviction-webhook'] !== undefined || values['admission-conversion-crd'] !== undefined;
    if (values.listen || values['admin-listen'] || values['manage-deletion-cost'] || values['workloadspread-status'] || values['admin-authorization'] || values['probe-listen']
      || picker || admission || values['policy-seat-table']) {
      config = parseConfig({
        ...config,
        extender: { ...config.extender, listen: values.listen ?? config.extender.listen },
        admin: {
          ...config.admin, listen: values['admin-listen'] ?? config.admin.listen,
          authorization: values['admin-authorization'] ?? config.admin.authorization, probeListen: values['probe-listen'] ?? config.admin.probeListen,
        },
        deletionCost: { ...config.deletionCost, enabled: config.deletionCost.enabled || !!values['manage-deletion-cost'] },
        workloadSpread: { ...config.workloadSpread, writeStatus: config.workloadSpread.writeStatus || !!values['workloadspread-status'] },
        policy: { ...config.policy, seatTable: config.policy.seatTable || !!values['policy-seat-table'] },
        picker: {
          ...config.picker, listen: values['picker-listen'] ?? config.picker.listen,
          tls: { ...config.picker.tls, certFile: values['picker-tls-cert'] ?? config.picker.tls.certFile, keyFile: values['picker-tls-key'] ?? config.picker.tls.keyFile },
        },
        admission: {
          ...config.admission, listen: values['admission-listen'] ?? config.admission.listen,
          certificate: {
            ...config.admission.certificate, secret: values['admission-secret'] ?? config.admission.certificate.secret,
            webhookConfiguration: values['admission-webhook'] ?? config.admission.certificate.webhookConfiguration,
            evictionWebhookConfiguration: values['admission-eviction-webhook'] ?? config.admission.certificate.evictionWebhookConfiguration,
            conversionCrd: values['admission-conversion-crd'] ?? config.admission.certificate.conversionCrd,
            dnsNames: values['admission-dns-name'] ?? config.admission.certificate.dnsNames,
          },
        },
      }, 'flags');
    }
  } catch (err) {
    if (err instanceof ConfigError) fail(`invalid configuration: ${err.message}`);
    if (err instanceof UnreadableFileError) fail(err.message);
    throw err;
  }
  const log = createLogger(config.logLevel);
  let choice;
  try {
    choice = chooseSource(values);
  } catch (err) {
    if (err instanceof UnreadableFileError) fail(err.message);
    throw err;
  }
  // A file's listeners (the demo's) at their defaults move to a free port when theirs is taken (8888, 9090 often are).
  const defaults = parseConfig({});
  const anyPortWhenBusy = choice.kind !== 'demo' && choice.kind !== 'snapshot' ? [] : ([['extender', values.listen, config.extender.listen, defaults.extender.listen],
    ['admin', values['admin-listen'], config.admin.listen, defaults.admin.listen]] as const)
    .filter(([, flag, set, dflt]) => flag === undefined && set === dflt).map(([name]) => name);
  // Signals are handled from the start: a supervisor may stop the server as soon as it reads the serving line.
  const starting = startServer(config, choice, log, undefined, { anyPortWhenBusy });
  stopOnSignal(starting, log);
  try {
    await starting;
  } catch (err) {
    const { SnapshotFileError } = await import('./cluster/source.js');
    if (err instanceof SnapshotFileError || err instanceof UnreadableFileError) fail(err.message);
    // Run by `npm start`, a flag reaches zonekeeper only after `--`.
    if (err instanceof ListenError) fail(process.env.npm_lifecycle_event === 'start' ? err.message.replace(/with (--[\w-]+ HOST:PORT)/, 'with npm start -- $1') : err.message);
    log.fatal({ err: (err as Error).message }, 'could not start');
    process.exit(1);
  }
}

/** SIGTERM or SIGINT: stop gracefully once (once started), then exit; a start that fails exits on its own. */
function stopOnSignal(starting: Promise<{ stop(): Promise<void> }>, log: import('./common/logger.js').Logger): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: readyz is 503, finishing in-flight requests');
    starting.then((running) => running.stop()).then(() => {
      log.info('stopped');
      process.exit(0);
    }, (err: Error) => {
      log.error({ err: err.message }, 'unclean shutdown');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** `zonekeeper karmada`: the scheduler of Karmada's bindings that name zonekeeper. */
async function karmada(argv: string[]): Promise<void> {
  const { ConfigError, loadConfig, parseConfig } = await import('./common/config.js');
  const { createLogger } = await import('./common/logger.js');
  const { chooseSource, startFederation } = await import('./main.js');
  const { UnreadableFileError } = await import('./common/errors.js');
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { config: { type: 'string' }, kubeconfig: { type: 'string' }, 'admin-listen': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (err) {
    usage((err as Error).message, 'zonekeeper karmada --help');
  }
  if (values.help) return void process.stdout.write(KARMADA_USAGE);
  let config;
  try {
    config = loadConfig(values.config);
    if (values['admin-listen']) config = parseConfig({ ...config, admin: { ...config.admin, listen: values['admin-listen'] } }, 'flags');
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UnreadableFileError) fail(err instanceof ConfigError ? `invalid configuration: ${err.message}` : err.message);
    throw err;
  }
  // The Karmada control plane is found as serve finds its cluster: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster.
  let choice;
  try {
    choice = chooseSource({ kubeconfig: values.kubeconfig });
  } catch (err) {
    if (err instanceof UnreadableFileError) fail(err.message);
    throw err;
  }
  if (choice.kind === 'demo' || choice.kind === 'snapshot') {
    usage('no Karmada control plane: pass --kubeconfig (no $KUBECONFIG, no ~/.kube/config, not in a cluster)', 'zonekeeper karmada --help');
  }
  const log = createLogger(config.logLevel);
  try {
    const starting = startFederation(config, choice, log);
    stopOnSignal(starting, log);
    await starting;
  } catch (err) {
    log.fatal({ err: (err as Error).message }, 'could not start');
    process.exit(1);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': return serve(rest);
    case 'karmada': return karmada(rest);
    case 'plan': {
      const { PLAN_USAGE, runPlan, UsageError } = await import('./planCommand.js');
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(PLAN_USAGE);
        return;
      }
      try {
        const { output, warnings } = runPlan(rest);
        process.stdout.write(`${output}\n`);
        for (const w of warnings) process.stderr.write(`zonekeeper: plan: ${w}\n`);
      } catch (err) {
        if (err instanceof UsageError) usage(`plan: ${err.message}`, 'zonekeeper plan --help');
        throw err;
      }
      return;
    }
    case 'audit': {
      const { AUDIT_USAGE, AuditError, AuditUsageError, runAudit } = await import('./auditCommand.js');
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(AUDIT_USAGE);
        return;
      }
      try {
        const { output, code } = await runAudit(rest);
        process.stdout.write(`${output}\n`);
        process.exitCode = code;
      } catch (err) {
        if (err instanceof AuditUsageError) usage(`audit: ${err.message}`, 'zonekeeper audit --help');
        if (err instanceof AuditError) fail(`audit: ${err.message}`);
        throw err;
      }
      return;
    }
    case undefined: case '-h': case '--help': case 'help':
      process.stdout.write(USAGE);
      return;
    case '--version': case '-v': case 'version':
      process.stdout.write(`zonekeeper ${version()}\n`);
      return;
    default:
      usage(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((err) => fail((err as Error).stack ?? String(err), 1));
