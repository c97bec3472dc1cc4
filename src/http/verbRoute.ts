import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { HttpError } from '../common/errors.js';
import { releaseAfterLargeBody } from '../common/memory.js';
import type { Metrics } from '../metrics/metrics.js';
import { errorResponse, failWith } from './httpErrors.js';
import { readBody } from './requestBody.js';

// What every transport's routes share: a verb's body read within a limit, parsed, answered,
// timed and counted; the answers for other methods, unknown paths and failures.

/** The client closed its connection before its body arrived: no answer can reach it, and it is not zonekeeper's failure. */
class ClientClosed extends Error {}

export type Answer<T> = (input: T, c: Context) => Response | Promise<Response>;

/** One POST route of a webhook listener: admission and the eviction gate share one (one certificate). */
export interface WebhookRoute { path: string; handler: (c: Context) => Promise<Response> }

/** A verb's route: the body read within `limit`, parsed, answered; an HttpError becomes its answer and is counted. */
export function verbRoute<T>(metrics: Metrics, name: string, limit: number, parse: (text: string) => T, answer: Answer<T>) {
  return async (c: Context) => {
    const done = metrics.requestDuration.startTimer({ verb: name });
    let bytes = 0;
    try {
      const text = await readBody(c, limit).catch((err: unknown) => {
        // A kube-scheduler or kube-apiserver that ended mid-request; counted as nginx's 499.
        throw c.req.raw.signal.aborted && !(err instanceof HttpError) ? new ClientClosed('client closed request', { cause: err }) : err;
      });
      bytes = text.length;
      return await answer(parse(text), c);
    } catch (err) {
      if (err instanceof ClientClosed) {
        metrics.badRequests.inc({ verb: name, status: '499' });
        return new Response(null, { status: 499 });
      }
      if (!(err instanceof HttpError)) throw err;
      metrics.badRequests.inc({ verb: name, status: String(err.status) });
      return errorResponse(c, err);
    } finally {
      done();
      releaseAfterLargeBody(bytes);
    }
  };
}

/** 405 with Allow for the other methods of `paths`, 404 naming the routes, 500 logged and counted. */
export function finish(app: Hono, paths: readonly string[], routes: string, log: Logger, metrics: Pick<Metrics, 'internalErrors'>): Hono {
  for (const path of paths) {
    app.all(path, (c) => failWith(c, 405, 'method not allowed', `${c.req.method} ${c.req.path}: ${routes}`, { headers: { allow: 'POST' } }));
  }
  app.notFound((c) => failWith(c, 404, 'not found', `no route ${c.req.method} ${c.req.path}; ${routes}`));
  app.onError((err, c) => {
    log.error({ err: err.message, stack: err.stack, path: c.req.path }, 'request failed');
    // The route's pattern, not the path asked: as many series as routes.
    metrics.internalErrors.inc({ path: c.req.routePath });
    // The error's text stays in the log: a caller (maybe unauthenticated) learns nothing of zonekeeper's insides.
    return failWith(c, 500, 'internal error', 'zonekeeper could not answer; the cause is in its log (message "request failed")');
  });
  return app;
}
