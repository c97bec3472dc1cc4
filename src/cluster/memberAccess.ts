import { createHash } from 'node:crypto';
import type http from 'node:http';
import { Readable } from 'node:stream';
import { kubeApiClient, statusMessage, type ApiClient } from './apiClient.js';
import type { SlimMemberCluster } from './karmada.js';
import { tokenAccess } from './kubeconfig.js';

// How zonekeeper reads a member's nodes and pods (docs/security.md#across-clusters).
// proxy: Karmada's cluster proxy, as zonekeeper's own Karmada identity; no member credential is read.
// direct: a Push member's own token, over verified TLS only. No Cluster can send another member's
// credential anywhere: only the Secrets named after it (as karmadactl join names them) are used.

export type MemberAccess = 'proxy' | 'direct';

/** `api` with every path under Karmada's proxy of `cluster`. */
function proxiedClient(api: ApiClient, cluster: string): ApiClient {
  const prefix = `/apis/cluster.karmada.io/v1alpha1/clusters/${encodeURIComponent(cluster)}/proxy`;
  return {
    server: `${api.server}${prefix}`,
    request: (method, path, opts) => api.request(method, prefix + path, opts),
    requestBytes: (method, path, opts) => api.requestBytes(method, prefix + path, opts),
    stream: (path, signal) => api.stream(prefix + path, signal),
  };
}

const ref = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`;

/** Why zonekeeper will not read member `c` with `access`, or undefined; decided before any request. */
export function accessRefusal(c: SlimMemberCluster, access: MemberAccess): string | undefined {
  const n = c.name;
  if (access === 'proxy') {
    const imp = c.impersonatorSecret;
    if (!imp) return `Cluster ${n} names no spec.impersonatorSecretRef: Karmada's cluster proxy cannot serve it (karmada.memberAccess: proxy; karmadactl join and karmada-agent create the Secret ${n}-impersonator)`;
    // Karmada's proxy sends that Secret's token to the endpoint this Cluster names: only the member's own.
    if (imp !== `${n}-impersonator`) return `Cluster ${n}'s spec.impersonatorSecretRef names ${imp}, not ${n}-impersonator: Karmada's proxy would send that token where this Cluster points, so zonekeeper does not ask it to`;
    return undefined;
  }
  if (c.syncMode !== 'Push') return `Cluster ${n} has syncMode ${c.syncMode || 'unset'}: karmada.memberAccess direct reads Push clusters only; read it through Karmada's cluster proxy (karmada.memberAccess: proxy)`;
  let url: URL | undefined;
  try {
    url = new URL(c.apiEndpoint);
  } catch { /* refused below */ }
  if (url?.protocol !== 'https:') return `Cluster ${n}'s spec.apiEndpoint ${JSON.stringify(c.apiEndpoint.slice(0, 100))} is not https://: karmada.memberAccess direct sends no token without verified TLS`;
  if (!c.secretRef) return `Cluster ${n} names no spec.secretRef (karmada.memberAccess: direct)`;
  if (c.secretRef.name !== n) return `Cluster ${n}'s spec.secretRef names ${ref(c.secretRef)}, not a Secret named ${n}: karmada.memberAccess direct reads only a member's own Secret`;
  return undefined;
}

/** A Push member's Secret as read: its token, its caBundle, and a digest of both (what a re-read compares). */
interface MemberSecret { token: string; ca: Buffer | undefined; digest: string }

async function memberSecret(api: ApiClient, c: SlimMemberCluster): Promise<MemberSecret> {
  const secret = c.secretRef!;
  const res = await api.request('GET', `/api/v1/namespaces/${encodeURIComponent(secret.namespace)}/secrets/${encodeURIComponent(secret.name)}`, { timeoutMs: 10_000 });
  if (res.status !== 200) throw new Error(`Cluster ${c.name}'s Secret ${ref(secret)}: ${res.status} ${statusMessage(res.body)}`);
  const data = (JSON.parse(res.body) as { data?: Record<string, string> }).data ?? {};
  if (!data.token) throw new Error(`Cluster ${c.name}'s Secret ${ref(secret)} holds no token`);
  const digest = createHash('sha256').update(`${secret.namespace}/${secret.name}\u0000${data.token}\u0000${data.caBundle ?? ''}`).digest('base64');
  return { token: Buffer.from(data.token, 'base64').toString('utf8'), ca: data.caBundle ? Buffer.from(data.caBundle, 'base64') : undefined, digest };
}

/** What member `c` is read with now: '' through the proxy; direct, a digest of its Secret (a new one: the client is built anew). */
export async function memberCredential(api: ApiClient, c: SlimMemberCluster, access: MemberAccess): Promise<string> {
  return access === 'proxy' ? '' : (await memberSecret(api, c)).digest;
}

/**
 * A client of member `c`'s API server, and the credential it holds (memberCredential's). Direct: the token of the
 * Secret named after it, read by name, its TLS verified with the Secret's caBundle, else the system's roots
 * (spec.insecureSkipTLSVerification is not honoured: a member that needs it is read through the proxy, where Karmada applies it).
 */
export async function memberClient(api: ApiClient, c: SlimMemberCluster, access: MemberAccess): Promise<{ client: ApiClient; credential: string }> {
  if (access === 'proxy') return { client: withAnswersUnsaid(proxiedClient(api, c.name)), credential: '' };
  const secret = c.secretRef!;
  const { token, ca, digest } = await memberSecret(api, c);
  const client = kubeApiClient(tokenAccess(c.apiEndpoint, token, ca));
  const checked = `${c.apiEndpoint}: TLS not verified with ${ca ? `the caBundle of Secret ${ref(secret)}` : "the system's roots (Secret " + ref(secret) + ' has no caBundle)'}`;
  return { client: withAnswersUnsaid(withTlsNamed(client, checked)), credential: digest };
}

/** A certificate the client refused is said with the endpoint and what it was checked against. */
function withTlsNamed(client: ApiClient, what: string): ApiClient {
  const said = (err: unknown): never => {
    const e = err as NodeJS.ErrnoException;
    if (/CERT|SIGNATURE|ALTNAME|ISSUER/.test(e?.code ?? '')) e.message = `${what}: ${e.message}`;
    throw err;
  };
  return {
    server: client.server,
    request: (method, path, opts) => client.request(method, path, opts).catch(said),
    requestBytes: (method, path, opts) => client.requestBytes(method, path, opts).catch(said),
    stream: (path, signal) => client.stream(path, signal).catch(said),
  };
}

/** What a member's failed answer is said as: its status and a fixed text. */
function memberFailure(status: number): string {
  if (status === 401) return 'the member (or Karmada\'s proxy) refused the credential';
  if (status === 403) return 'forbidden: manifests/karmada/member-rbac.yaml in the member (proxy: rbac.yaml\'s clusters/proxy on Karmada)';
  if (status === 404) return 'not served';
  if (status === 429) return 'too many requests';
  if (status >= 500) return 'the member, or Karmada\'s proxy to it, failed or is unreachable';
  return 'an answer zonekeeper does not read';
}

/** A failed answer's body, replaced by a Status of the fixed text: a member's words reach no log, no page. */
function withAnswersUnsaid(client: ApiClient): ApiClient {
  const failed = (status: number) => JSON.stringify({ kind: 'Status', message: memberFailure(status) });
  const ok = (status: number) => status >= 200 && status < 300;
  return {
    server: client.server,
    request: async (method, path, opts) => {
      const res = await client.request(method, path, opts);
      return ok(res.status) ? res : { status: res.status, body: failed(res.status) };
    },
    requestBytes: async (method, path, opts) => {
      const res = await client.requestBytes(method, path, opts);
      return ok(res.status) ? res : { status: res.status, body: Buffer.from(failed(res.status)) };
    },
    stream: async (path, signal) => {
      const res = await client.stream(path, signal);
      const status = res.statusCode ?? 0;
      if (ok(status)) return res;
      res.destroy();
      // Read as the reflector reads any failed watch: the status, then the (fixed) Status.
      return Object.assign(Readable.from([Buffer.from(failed(status))]), { statusCode: status, headers: {} }) as unknown as http.IncomingMessage;
    },
  };
}
