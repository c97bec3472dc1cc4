import { describeIssues, UnreadableFileError, yamlProblem, ZonekeeperError } from './errors.js';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';

/** What is wrong with a HOST:PORT value, or undefined: the config's check and the serve flags' alike. */
export function hostPortProblem(value: string): string | undefined {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  if (!m) return 'expected HOST:PORT';
  const port = Number(m[2]);
  return port > 65535 ? `port ${port} is out of range: 0 to 65535 (0: any free port)` : undefined;
}

/** HOST:PORT; `optional`: '' too, for a listener that is off. */
const hostPortValue = (optional: boolean) => z.string().superRefine((v, ctx) => {
  const problem = optional && v === '' ? undefined : hostPortProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: optional ? `${problem}, or "" for none` : problem });
});
const hostPort = hostPortValue(false);
const optionalHostPort = hostPortValue(true);

/** Every listener `serve` opens: its config key and the flag that overrides it (a port in use names both). */
export const LISTENER_SETTINGS = {
  extender: { key: 'extender.listen', flag: '--listen' },
  admin: { key: 'admin.listen', flag: '--admin-listen' },
  probe: { key: 'admin.probeListen', flag: '--probe-listen' },
  picker: { key: 'picker.listen', flag: '--picker-listen' },
  admission: { key: 'admission.listen', flag: '--admission-listen' },
} as const;
const positive = z.number().positive();

/** Half a TLS configuration would quietly serve plain HTTP: refuse it, naming what is missing. */
function tlsComplete(t: { certFile: string; keyFile: string; clientCAFile: string }, ctx: z.RefinementCtx): void {
  const missing = (key: string, because: string) => ctx.addIssue({ code: 'custom', path: [key], message: `required ${because}` });
  if (t.certFile && !t.keyFile) missing('keyFile', 'with certFile');
  if (t.keyFile && !t.certFile) missing('certFile', 'with keyFile');
  if (t.clientCAFile && !t.certFile) missing('certFile', 'with clientCAFile (mutual TLS needs the server to serve TLS)');
  if (t.clientCAFile && !t.keyFile) missing('keyFile', 'with clientCAFile (mutual TLS needs the server to serve TLS)');
}

function isLoopback(hp: string): boolean {
  const { host } = splitHostPort(hp);
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The most read of one answer from the API server or a member (docs/security.md#memory): a list page
 * (a 500-item page of large pods is a few MiB), a watch event (one object: etcd keeps up to 1.5 MiB,
 * its JSON can be several times that), anything else.
 */
export const DEFAULT_RESPONSE_LIMITS = {
  listPageMaxBytes: 32 * 1024 * 1024, watchEventMaxBytes: 16 * 1024 * 1024, responseMaxBytes: 16 * 1024 * 1024,
} as const;

/** The Lease of `serve`'s writers when none is named (`zonekeeper karmada` takes its own: main.ts). */
export const DEFAULT_LEASE_NAME = 'zonekeeper-writers';

// Every option, strict: an unknown key is an error that names it. Defaults live here and
// are listed, with a comment each, in config/zonekeeper.yaml.

export const configSchema = z.strictObject({
  extender: z.strictObject({
    listen: hostPort.default('127.0.0.1:8888'),
    bodyLimitBytes: z.number().int().positive().default(128 * 1024 * 1024),
    legacyFailedNodes: z.boolean().default(false),
    reportRejectedWhenPlaced: z.boolean().default(false),
    pickerBodyLimitBytes: z.number().int().positive().default(1024 * 1024),
    tls: z.strictObject({
      certFile: z.string().default(''),
      keyFile: z.string().default(''),
      clientCAFile: z.string().default(''),
    }).prefault({}).superRefine(tlsComplete),
  }).prefault({}).superRefine((e, ctx) => {
    // Filter takes seats and instance IDs: off loopback only kube-scheduler, by its client certificate, may ask.
    if (!isLoopback(e.listen) && !(e.tls.certFile && e.tls.keyFile && e.tls.clientCAFile)) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: `extender.listen ${e.listen} is not loopback: anyone on the network could take seats; set extender.tls certFile, keyFile and clientCAFile (kube-scheduler's tlsConfig presents a client certificate), or listen on 127.0.0.1` });
    }
  }),
  admission: z.strictObject({
    // The mutating webhook for pod CREATE (docs/design.md#admission), on a TLS listener of its own; '' = off.
    listen: optionalHostPort.default(''),
    // A pod and its review: kube-apiserver takes no request over 3 MiB.
    bodyLimitBytes: z.number().int().positive().default(4 * 1024 * 1024),
    // kube-apiserver opens one connection per call in flight (HTTP/1.1 to webhooks): a burst of creates needs more than http.maxConnections.
    maxConnections: z.number().int().min(1).default(2048),
    // Per source address: half the cap, so that no one address (a pod, a proxy) takes the listener whole.
    maxConnectionsPerSource: z.number().int().min(1).default(1024),
    // Files an operator or cert-manager keeps (read again every 60 s: a renewal needs no restart).
    tls: z.strictObject({
      certFile: z.string().default(''),
      keyFile: z.string().default(''),
      // The CA of kube-apiserver's client certificate (its AdmissionConfiguration kubeConfigFile): a caller without one is refused at the handshake.
      clientCAFile: z.string().default(''),
      // Whose certificates of that CA are kube-apiserver's: CN one of these, or an O one of clientOrganizations (not a kubelet's of the same CA).
      clientCommonNames: z.array(z.string().min(1).max(253)).max(64).default(['kube-apiserver']),
      clientOrganizations: z.array(z.string().min(1).max(253)).max(64).default([]),
    }).prefault({}),
    // Without a client CA: whether every caller that reaches the port is taken as kube-apiserver; true only where a NetworkPolicy admits nothing else.
    trustNetwork: z.boolean().default(false),
    // Serve the eviction gate (/admission/evictions); implied by certificate.evictionWebhookConfiguration.
    evictions: z.boolean().default(false),
    // Or a certificate zonekeeper issues and renews itself (docs/operations.md#the-admission-certificate).
    certificate: z.strictObject({
      // The Secret holding the CA and the serving certificate, `namespace/name`; '' = use tls files.
      secret: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'namespace/name').or(z.literal('')).default(''),
      // The MutatingWebhookConfiguration whose webhooks get the CA as caBundle; '' = written by someone else.
      webhookConfiguration: z.string().max(253).default(''),
      // The ValidatingWebhookConfiguration of the eviction gate (pods/eviction), whose webhooks get the CA too; '' = none.
      evictionWebhookConfiguration: z.string().max(253).default(''),
      // The CRD whose conversion webhook (/convert) gets the CA as caBundle: zonekeeper's WorkloadSpread CRD; '' = none (never OpenKruise's).
      conversionCrd: z.string().max(253).default(''),
      // The names kube-apiserver calls the webhook by: the Service's DNS names, or IPs.
      dnsNames: z.array(z.string().min(1).max(253)).max(64).default([]),
      ipAddresses: z.array(z.union([z.ipv4(), z.ipv6()])).max(64).default([]),
      validityDays: z.number().int().min(2).max(3650).default(365),
      renewBeforeDays: z.number().int().min(1).default(30),
      checkIntervalSeconds: positive.default(60),
    }).prefault({}),
  }).prefault({}).superRefine((a, ctx) => {
    const files = !!(a.tls.certFile && a.tls.keyFile);
    if (a.listen && !files && !a.certificate.secret) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: 'admission.listen needs admission.tls.certFile and keyFile, or admission.certificate.secret: kube-apiserver calls webhooks over HTTPS only' });
    }
    if (a.tls.clientCAFile && a.tls.clientCommonNames.length + a.tls.clientOrganizations.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['tls', 'clientCommonNames'], message: 'a client CA needs the subject of kube-apiserver\'s certificate: clientCommonNames or clientOrganizations' });
    }
    if (a.tls.clientCAFile && !files && !a.certificate.secret) {
      ctx.addIssue({ code: 'custom', path: ['tls', 'clientCAFile'], message: 'a client CA needs TLS: admission.tls.certFile and keyFile, or admission.certificate.secret' });
    }
    if (files && a.certificate.secret) ctx.addIssue({ code: 'custom', path: ['certificate', 'secret'], message: 'set admission.tls files or admission.certificate.secret, not both' });
    if (a.certificate.secret && a.certificate.dnsNames.length + a.certificate.ipAddresses.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['certificate', 'dnsNames'], message: 'a managed certificate names the webhook: dnsNames (the Service) or ipAddresses' });
    }
    if (a.certificate.renewBeforeDays * 2 >= a.certificate.validityDays) {
      ctx.addIssue({ code: 'custom', path: ['certificate', 'renewBeforeDays'], message: 'must be less than half of validityDays' });
    }
  }),
  admin: z.strictObject({
    listen: hostPort.default('127.0.0.1:9090'),
    // Health only, for kubelet probes on the pod IP; '' = no such listener.
    probeListen: optionalHostPort.default(''),
    authorization: z.enum(['none', 'kubernetes']).default('none'),
    // The audiences a bearer token must be issued for (admin and picker), e.g. [zonekeeper]: a token for the API server is then refused; [] = any.
    tokenAudiences: z.array(z.string().min(1).max(253)).max(16).default([]),
  }).prefault({}).superRefine((a, ctx) => {
    if (a.authorization === 'none' && !isLoopback(a.listen)) {
      ctx.addIssue({ code: 'custom', path: ['authorization'], message: `admin.listen ${a.listen} is not loopback: /debug and /metrics would be open to the network; set admin.authorization: kubernetes, or listen on 127.0.0.1 and use admin.probeListen for probes` });
    }
  }),
  picker: z.strictObject({
    // KEP-3189's pod picker for controllers in other pods; '' = not served on a listener of its own.
    listen: optionalHostPort.default(''),
    authorization: z.enum(['none', 'kubernetes']).default('kubernetes'),
    tls: z.strictObject({
      certFile: z.string().default(''),
      keyFile: z.string().default(''),
      clientCAFile: z.string().default(''),
    }).prefault({}).superRefine(tlsComplete),
  }).prefault({}).superRefine((p, ctx) => {
    if (p.listen && p.authorization === 'none' && !isLoopback(p.listen)) {
      ctx.addIssue({ code: 'custom', path: ['authorization'], message: `picker.listen ${p.listen} is not loopback: anyone could ask which pods to remove; set picker.authorization: kubernetes` });
    }
  }),
  http: z.strictObject({
    // Every phase of a connection has a limit that fits a webhook's timeout (at most 30 s): no socket is held longer.
    handshakeTimeoutMs: z.number().int().min(100).default(5_000),
    headersTimeoutMs: z.number().int().min(100).default(5_000),
    bodyTimeoutMs: z.number().int().min(100).default(10_000),
    requestTimeoutMs: z.number().int().min(100).default(30_000),
    keepAliveTimeoutMs: z.number().int().min(100).default(15_000),
    maxConnections: z.number().int().min(1).default(512),
    // One source address (a pod) holds at most this many sockets of a listener.
    maxConnectionsPerSource: z.number().int().min(1).default(64),
  }).prefault({}).superRefine((h, ctx) => {
    for (const k of ['headersTimeoutMs', 'bodyTimeoutMs'] as const) {
      if (h[k] > h.requestTimeoutMs) ctx.addIssue({ code: 'custom', path: [k], message: 'must not exceed http.requestTimeoutMs' });
    }
  }),
  cluster: z.strictObject({
    listPageSize: z.number().int().min(1).max(10_000).default(500),
    watchTimeoutSeconds: z.number().int().min(1).default(300),
    watchSilenceSeconds: positive.default(360),
    backoffInitialMs: z.number().int().min(1).default(500),
    backoffMaxMs: z.number().int().min(1).default(30_000),
    crdRecheckSeconds: positive.default(60),
    maxStalenessSeconds: positive.default(60),
    // A larger list page is refused and the list asked again with half as many items a page.
    listPageMaxBytes: z.number().int().min(1024 * 1024).default(DEFAULT_RESPONSE_LIMITS.listPageMaxBytes),
    // A larger watch event (one object) is refused and the kind relisted.
    watchEventMaxBytes: z.number().int().min(1024 * 1024).default(DEFAULT_RESPONSE_LIMITS.watchEventMaxBytes),
    // Any other answer (an object, discovery, a review): a larger one is an error.
    responseMaxBytes: z.number().int().min(1024 * 1024).default(DEFAULT_RESPONSE_LIMITS.responseMaxBytes),
  }).prefault({}).refine((c) => c.listPageMaxBytes >= c.watchEventMaxBytes, {
    path: ['listPageMaxBytes'], message: 'must be at least cluster.watchEventMaxBytes: a page of one object holds what its watch event holds',
  }),
  placement: z.strictObject({
    topologyKey: z.string().min(1).default('topology.kubernetes.io/zone'),
    manageStatefulSets: z.boolean().default(true),
    freezeZones: z.boolean().default(true),
    fleetBalance: z.boolean().default(true),
    zoneFallback: z.enum(['strict', 'adaptive']).default('strict'),
    fallbackAfterSeconds: positive.default(120),
    reservationTtlSeconds: positive.default(30),
    adaptiveUnschedulableSeconds: positive.default(300),
    adoptExisting: z.boolean().default(true),
    spreadNodes: z.boolean().default(true),
    growInto: z.enum(['auto', 'cluster', 'nodePools']).default('auto'),
    clusterZones: z.array(z.string().min(1).max(63)).max(256).default([]),
  }).prefault({}),
  disruption: z.strictObject({
    // An approved eviction whose pod is not deleted within this long lapses (a PDB refused it, the client gave up).
    approvalSeconds: positive.default(30),
  }).prefault({}),
  deletionCost: z.strictObject({
    enabled: z.boolean().default(false),
    intervalSeconds: positive.default(5),
    patchesPerSecond: positive.default(20),
  }).prefault({}),
  leaderElection: z.strictObject({
    enabled: z.boolean().default(true),
    // '' = the pod's own namespace in a cluster, else default.
    namespace: z.string().default(''),
    leaseName: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a DNS-1123 subdomain').max(253).default(DEFAULT_LEASE_NAME),
    leaseDurationSeconds: positive.default(15),
    renewDeadlineSeconds: positive.default(10),
    retryPeriodSeconds: positive.default(2),
  }).prefault({}).superRefine((l, ctx) => {
    // As client-go: the old leader stops writing before anyone else may take the lease.
    if (l.renewDeadlineSeconds >= l.leaseDurationSeconds) ctx.addIssue({ code: 'custom', path: ['renewDeadlineSeconds'], message: 'must be less than leaseDurationSeconds' });
    if (l.retryPeriodSeconds * 1.2 >= l.renewDeadlineSeconds) ctx.addIssue({ code: 'custom', path: ['retryPeriodSeconds'], message: 'times 1.2 (jitter) must be less than renewDeadlineSeconds' });
  }),
  workloadSpread: z.strictObject({
    writeStatus: z.boolean().default(false),
    statusIntervalSeconds: positive.default(5),
    rescheduleEvictionsPerMinute: positive.default(60),
    rescheduleDryRun: z.boolean().default(false),
    podsBeyondSubsets: z.enum(['admit', 'wait']).default('admit'),
  }).prefault({}),
  instanceIds: z.strictObject({
    assignDeadlineMs: z.number().int().min(100).default(2000),
    keepPods: z.boolean().default(true),
    intervalSeconds: positive.default(5),
    patchesPerSecond: positive.default(20),
  }).prefault({}),
  health: z.strictObject({
    settleSeconds: positive.default(60),
    intervalSeconds: positive.default(30),
    events: z.boolean().default(true),
  }).prefault({}),
  rebalance: z.strictObject({
    enabled: z.boolean().default(false),
    dryRun: z.boolean().default(false),
    evictionsPerMinute: positive.default(6),
    zoneStableSeconds: z.number().min(0).default(300),
    intervalSeconds: positive.default(5),
  }).prefault({}),
  // Zone-by-zone rollouts of OnDelete StatefulSets that opt in (docs/design.md#zone-by-zone-rollouts).
  zoneRollout: z.strictObject({
    enabled: z.boolean().default(true),
    maxUnavailable: z.string().regex(/^(zone|[1-9]\d{0,5}|[1-9]\d?%|100%)$/, 'expected "zone", a count (1, 2, …) or a percentage (1%–100%)').default('zone'),
    batchGrowth: z.number().int().min(0).max(10).default(2),
    progressDeadlineSeconds: z.number().int().min(1).max(86_400).default(600),
    intervalSeconds: positive.default(10),
  }).prefault({}),
  gate: z.strictObject({
    enabled: z.boolean().default(true),
    intervalSeconds: positive.default(5),
    patchesPerSecond: positive.default(500),
    fallbackEvictionsPerMinute: positive.default(6),
    fallbackDryRun: z.boolean().default(false),
  }).prefault({}),
  // The policy transport (docs/design.md#the-policy): the seat table a MutatingAdmissionPolicy reads. Off unless asked.
  policy: z.strictObject({
    seatTable: z.boolean().default(false),
    configMapName: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/).default('zonekeeper-seats'),
    maxBytes: z.number().int().min(1024).max(900 * 1024).default(512 * 1024),
    patchesPerSecond: positive.default(20),
  }).prefault({}),
  // zonekeeper as the scheduler of Karmada's bindings that name it (`zonekeeper karmada`; docs/design.md#across-clusters).
  karmada: z.strictObject({
    schedulerName: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a DNS-1123 subdomain').max(253).default('zonekeeper'),
    // Seed 002's "Y minutes": a member's pods of a workload unscheduled this long count against its capacity.
    pendingSeconds: positive.default(300),
    keepWaiting: z.number().int().min(0).max(100).default(2),
    ordinalStride: z.number().int().min(1).max(1_000_000).default(1000),
    overrideSettleSeconds: z.number().min(0).max(60).default(2),
    resyncSeconds: positive.default(30),
    memberStalenessSeconds: positive.default(30),
    // How members' nodes and pods are read (docs/security.md#across-clusters): Karmada's cluster proxy, or a Push member's own token.
    memberAccess: z.enum(['proxy', 'direct']).default('proxy'),
    // Bindings planned and written at once, and the client-side pace of bindings written (a spec patch, a status patch, Events).
    workers: z.number().int().min(1).max(64).default(32),
    bindingsPerSecond: positive.default(100),
  }).prefault({}),
  metrics: z.strictObject({
    maxWorkloadSeries: z.number().int().min(0).default(1000),
  }).prefault({}),
  debug: z.strictObject({
    decisionsKeptPods: z.number().int().min(1).default(2000),
    decisionsPerPod: z.number().int().min(1).max(100).default(10),
    decisionsMaxBytes: z.number().int().min(1024).default(32 * 1024 * 1024),
  }).prefault({}),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  shutdownGraceSeconds: positive.default(10),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends ZonekeeperError {}

/** Whether the admission listener serves the eviction gate (/admission/evictions). */
export function servesEvictions(a: Config['admission']): boolean {
  return !!a.listen && (a.evictions || !!a.certificate.evictionWebhookConfiguration);
}

/** How the admission listener knows its caller: a verified client certificate, the network (asserted), or not at all. */
export function admissionCallers(a: Config['admission']): 'certificate' | 'network' | 'none' {
  return a.tls.clientCAFile ? 'certificate' : a.trustNetwork ? 'network' : 'none';
}

export function parseConfig(value: unknown, origin = 'config'): Config {
  const result = configSchema.safeParse(value ?? {});
  if (!result.success) throw new ConfigError(`${origin}: ${describeIssues(result.error)}`);
  return result.data;
}

export function loadConfig(path: string | undefined): Config {
  if (!path) return parseConfig({});
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UnreadableFileError('--config', path, err as NodeJS.ErrnoException);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid YAML: ${yamlProblem((err as Error).message)}`);
  }
  return parseConfig(value, path);
}

export function splitHostPort(hp: string): { host: string; port: number } {
  const i = hp.lastIndexOf(':');
  return { host: hp.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(hp.slice(i + 1)) };
}
