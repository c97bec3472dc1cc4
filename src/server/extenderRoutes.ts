import { Hono, type Context } from 'hono';
import type { Logger } from 'pino';
import type { Extender } from '../extender/extender.js';
import { BadRequest, parseExtenderArgs, parsePickRequest, type ExtenderArgs } from '../extender/protocol.js';
import type { Metrics } from '../metrics.js';

export type Verb = 'filter' | 'prioritize' | 'downscale-pod-picker';

export class PayloadTooLarge extends Error {}

/**
 * Reads the body, refusing more than `limit` bytes. A declared Content-Length over the
 * limit is refused before reading (Node's parser never reads past it); a chunked body is
 * counted as it arrives and abandoned at the limit.
 */
export async function readBody(c: Context, limit: number): Promise<string> {
  const declared = c.req.header('content-length');
  if (declared !== undefined) {
    const n = Number(declared);
    if (!Number.isSafeInteger(n) || n > limit) throw new PayloadTooLarge();
    return c.req.text();
  }
  const stream = c.req.raw.body;
  if (!stream) return '';
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new PayloadTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string, what: string): unknown {
  if (!text.trim()) throw new BadRequest('(body)', `empty body: expected ${what} JSON`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadRequest('(body)', `malformed JSON: ${(err as Error).message}`);
  }
}

/** Parses and validates ExtenderArgs; a BadRequest names the field that is wrong. */
export function parseArgs(text: string): ExtenderArgs {
  return parseExtenderArgs(parseJson(text, 'ExtenderArgs'));
}

/** The extender listener: the verbs at the URL root, as kube-scheduler's urlPrefix expects. */
export function extenderRoutes(ext: Extender, metrics: Metrics, log: Logger, bodyLimitBytes: number, pickerBodyLimitBytes = 1024 * 1024): Hono {
  const app = new Hono();

  const route = <T>(name: Verb, limit: number, parse: (text: string) => T, answer: (input: T, c: Context) => Response | Promise<Response>) => async (c: Context) => {
    const done = metrics.requestDuration.startTimer({ verb: name });
    try {
      return await answer(parse(await readBody(c, limit)), c);
    } catch (err) {
      if (err instanceof PayloadTooLarge) {
        metrics.badRequests.inc({ verb: name, status: '413' });
        return c.json({ error: 'payload too large', limitBytes: limit }, 413);
      }
      if (err instanceof BadRequest) {
        metrics.badRequests.inc({ verb: name, status: '400' });
        return c.json({ error: 'bad request', field: err.field, message: err.message }, 400);
      }
      throw err;
    } finally {
      done();
    }
  };

  const verb = (name: Verb, answer: (args: ExtenderArgs, c: Context) => Response | Promise<Response>) => route(name, bodyLimitBytes, parseArgs, answer);
  app.post('/filter', verb('filter', async (args, c) => c.body(await ext.filter(args), 200, { 'content-type': 'application/json' })));
  app.post('/prioritize', verb('prioritize', (args, c) => c.json(ext.prioritize(args))));
  // KEP-3189's downscale pod picker: which of the candidates to remove (DESIGN §7).
  app.post('/v1/downscale-pod-picker/:namespace', route('downscale-pod-picker', pickerBodyLimitBytes, (t) => parsePickRequest(parseJson(t, 'pod-picker request')), (req, c) => {
    const answer = ext.pickPodsToRemove(c.req.param('namespace')!, req.number_of_pods_requested, req.candidate_pods);
    if (!answer) return c.json({ error: 'not ready', message: 'cluster cache not synced yet; retry' }, 503);
    return c.json(answer);
  }));
  app.notFound((c) => c.json({ error: 'not found', message: `no route ${c.req.method} ${c.req.path}; the routes are POST /filter, POST /prioritize and POST /v1/downscale-pod-picker/{namespace}` }, 404));
  app.onError((err, c) => {
    log.error({ err: err.message, stack: err.stack, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal error', message: err.message }, 500);
  });
  return app;
}
