import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { LRUCache } from 'lru-cache';
import type { ApiClient } from '../cluster/apiClient.js';
import { failWith } from '../http/httpErrors.js';

// /metrics and /debug/* for callers the API server vouches for, as controller-runtime's
// secure metrics serving does: the bearer token goes to a TokenReview, the user it names to
// a SubjectAccessReview for `get` on the path (a nonResourceURL rule in RBAC).

type AuthVerdict =
  | { allowed: true; user: string }
  | { allowed: false; status: 401 | 403 | 503; message: string };

export interface AdminAuthorizer {
  /** `verb`: the request's, as RBAC names it for a non-resource path (a GET is `get`, a POST `post`). */
  check(authorization: string | undefined, path: string, verb?: 'get' | 'post'): Promise<AuthVerdict>;
}

/** What a decision may be reused for: a revoked token or role stops working within this. */
const CACHE_TTL_MS = 10_000;
const BEARER = /^Bearer ([^\s]{1,8192})$/i;

interface UserInfo { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }

/**
 * `audiences`: what a token must be issued for (admin.tokenAudiences); a token for the API server
 * itself is refused, so one that crosses the pod network cannot be replayed against the API server.
 */
export function kubernetesAuthorizer(api: ApiClient, audiences: readonly string[]): AdminAuthorizer {
  // Keyed by a request's path too: bounded in bytes, whatever paths a caller sends.
  const decided = new LRUCache<string, AuthVerdict>({
    max: 2000, maxSize: 4 * 1024 * 1024, sizeCalculation: (_, key) => 2 * key.length + 256, ttl: CACHE_TTL_MS,
  });

  async function review(kind: 'tokenreviews' | 'subjectaccessreviews', group: string, spec: unknown): Promise<any> {
    const res = await api.request('POST', `/apis/${group}/v1/${kind}`, {
      body: JSON.stringify({ apiVersion: `${group}/v1`, kind: kind === 'tokenreviews' ? 'TokenReview' : 'SubjectAccessReview', spec }),
      contentType: 'application/json', timeoutMs: 5000,
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`${kind}: ${res.status}`);
    return JSON.parse(res.body).status ?? {};
  }

  async function decide(token: string, path: string, verb: 'get' | 'post'): Promise<AuthVerdict> {
    const tr = await review('tokenreviews', 'authentication.k8s.io', { token, ...(audiences.length > 0 ? { audiences } : {}) });
    if (tr.authenticated !== true || !tr.user?.username) return { allowed: false, status: 401, message: 'the bearer token was not accepted by the API server' };
    // As the TokenReview API asks: the authenticator must say which of ours the token is for.
    const heard: unknown = tr.audiences;
    if (audiences.length > 0 && !(Array.isArray(heard) && heard.some((a) => audiences.includes(a)))) {
      return { allowed: false, status: 401, message: `the bearer token is not issued for ${audiences.join(' or ')} (admin.tokenAudiences): request one with that audience` };
    }
    const user = tr.user as UserInfo;
    const sar = await review('subjectaccessreviews', 'authorization.k8s.io', {
      user: user.username, uid: user.uid, groups: user.groups, extra: user.extra,
      nonResourceAttributes: { path, verb },
    });
    if (sar.allowed === true) return { allowed: true, user: user.username };
    return { allowed: false, status: 403, message: `${user.username} may not ${verb} ${path}` };
  }

  return {
    async check(authorization, path, verb = 'get') {
      const m = authorization ? BEARER.exec(authorization) : null;
      if (!m) return { allowed: false, status: 401, message: 'a bearer token is required (Authorization: Bearer …)' };
      // Tokens are never kept: only a digest of one names a cached decision.
      const key = `${createHash('sha256').update(m[1]!).digest('base64url')} ${verb} ${path}`;
      const hit = decided.get(key);
      if (hit) return hit;
      try {
        const verdict = await decide(m[1]!, path, verb);
        decided.set(key, verdict);
        return verdict;
      } catch (err) {
        return { allowed: false, status: 503, message: `could not check the token with the API server: ${(err as Error).message}` };
      }
    },
  };
}

/** Guards a route: 401 without an accepted token, 403 without RBAC for the path and verb. */
export function requireAuthorization(auth: AdminAuthorizer, verb: 'get' | 'post' = 'get'): MiddlewareHandler {
  return async (c, next) => {
    // RBAC's nonResourceURLs match paths; /debug/workloads/ns/kind/name is asked as itself.
    const verdict = await auth.check(c.req.header('authorization'), c.req.path, verb);
    if (!verdict.allowed) {
      if (verdict.status === 401) c.header('www-authenticate', 'Bearer');
      return failWith(c, verdict.status, verdict.status === 401 ? 'unauthorized' : verdict.status === 403 ? 'forbidden' : 'unavailable', verdict.message);
    }
    await next();
  };
}
