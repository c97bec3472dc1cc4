import { Hono, type Context } from 'hono';
import type { Logger } from 'pino';
import { sectionNames, splitNodeNames, type AnsweredNames } from '../extender/namesSection.js';
import type { Extender } from '../extender/extender.js';
import { BadRequest, checkNodeNamesCount, checkNodeNamesList, parseExtenderArgs, parsePickRequest, type ExtenderArgs } from '../extender/protocol.js';
import { isDnsLabel } from '../cluster/names.js';
import type { Metrics } from '../metrics.js';
import { releaseAfterLargeBody } from '../memory.js';
import { PayloadTooLarge, readBody, UnsupportedMedia } from './requestBody.js';

export type Verb = 'filter' | 'prioritize' | 'downscale-pod-picker';

function parseJson(text: string, what: string): unknown {
  if (!text.trim()) throw new BadRequest('(body)', `empty body: expected ${what} JSON`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadRequest('(body)', `malformed JSON: ${(err as Error).message}`);
  }
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Parses and validates ExtenderArgs; a BadRequest names the field that is wrong. NodeNames
 * taken apart from the rest (namesSection.ts) get the same checks; on any doubt or error the
 * whole body is parsed again, so errors read as they always did.
 */
export function parseArgs(text: string, maxNodes?: number, answered: Iterable<AnsweredNames> = []): ExtenderArgs {
  const split = splitNodeNames(text);
  const found = split && sectionNames(split.section, answered, maxNodes);
  const rest = found && parsedOrUndefined(split.rest);
  if (found && rest !== undefined) {
    // The body parses whole (the section is plain), so too many names is the first error it
    // gives: given here, the names past the bound are never taken apart.
    checkNodeNamesCount(found.count, maxNodes);
    try {
      const args = parseExtenderArgs(rest, maxNodes);
      if (args.NodeNames?.length === 0) {
        if (!found.checked) checkNodeNamesList(found.names);
        args.NodeNames = found.names;
        return args;
      }
    } catch {
      // the whole body, for the error it names
    }
  }
  return parseExtenderArgs(parseJson(text, 'ExtenderArgs'), maxNodes);
}

export interface BodyLimits { bodyLimitBytes: number; pickerBodyLimitBytes: number }

const JSON_TYPE = { 'content-type': 'application/json' };

/** The verbs' answers are ASCII (encoding.ts): as Latin-1 they are bytes by a plain copy, no UTF-8 pass. */
const asciiBytes = (text: string) => Buffer.from(text, 'latin1');

const ROUTES = 'the routes are POST /filter, POST /prioritize and POST /v1/downscale-pod-picker/{namespace}';

/** The extender listener: the verbs at the URL root, as kube-scheduler's urlPrefix expects. */
export function extenderRoutes(ext: Extender, metrics: Metrics, log: Logger, limits: BodyLimits): Hono {
  const { bodyLimitBytes, pickerBodyLimitBytes } = limits;
  const app = new Hono();

  const route = <T>(name: Verb, limit: number, parse: (text: string) => T, answer: (input: T, c: Context) => Response | Promise<Response>) => async (c: Context) => {
    const done = metrics.requestDuration.startTimer({ verb: name });
    let bytes = 0;
    try {
      const text = await readBody(c, limit);
      bytes = text.length;
      return await answer(parse(text), c);
    } catch (err) {
      if (err instanceof PayloadTooLarge) {
        metrics.badRequests.inc({ verb: name, status: '413' });
        return c.json({ error: 'payload too large', limitBytes: limit }, 413);
      }
      if (err instanceof UnsupportedMedia) {
        metrics.badRequests.inc({ verb: name, status: '415' });
        return c.json({ error: 'unsupported media type', message: err.message }, 415);
      }
      if (err instanceof BadRequest) {
        metrics.badRequests.inc({ verb: name, status: '400' });
        return c.json({ error: 'bad request', field: err.field, message: err.message }, 400);
      }
      throw err;
    } finally {
      done();
      releaseAfterLargeBody(bytes);
    }
  };

  const verb = (name: Verb, answer: (args: ExtenderArgs, c: Context) => Response | Promise<Response>) => route(name, bodyLimitBytes, (text) => parseArgs(text, ext.maxCandidates(), name === 'prioritize' ? ext.answeredNames() : undefined), answer);
  app.post('/filter', verb('filter', async (args, c) => c.body(asciiBytes(await ext.filter(args)), 200, JSON_TYPE)));
  app.post('/prioritize', verb('prioritize', (args, c) => c.body(asciiBytes(ext.prioritize(args)), 200, JSON_TYPE)));
  // KEP-3189's downscale pod picker: which of the candidates to remove (design §7).
  app.post('/v1/downscale-pod-picker/:namespace', route('downscale-pod-picker', pickerBodyLimitBytes, (t) => parsePickRequest(parseJson(t, 'pod-picker request')), (req, c) => {
    const namespace = c.req.param('namespace')!;
    if (!isDnsLabel(namespace)) throw new BadRequest('namespace', 'the path names no valid namespace (a DNS-1123 label of at most 63 characters)');
    const answer = ext.pickPodsToRemove(namespace, req.number_of_pods_requested, req.candidate_pods);
    if (!answer) return c.json({ error: 'not ready', message: 'cluster cache not synced yet; retry' }, 503);
    return c.json(answer);
  }));
  // The verbs exist for POST only: other methods learn which one with 405 and Allow.
  for (const path of ['/filter', '/prioritize', '/v1/downscale-pod-picker/:namespace']) {
    app.all(path, (c) => c.json({ error: 'method not allowed', message: `${c.req.method} ${c.req.path}: ${ROUTES}` }, 405, { allow: 'POST' }));
  }
  app.notFound((c) => c.json({ error: 'not found', message: `no route ${c.req.method} ${c.req.path}; ${ROUTES}` }, 404));
  app.onError((err, c) => {
    log.error({ err: err.message, stack: err.stack, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal error', message: err.message }, 500);
  });
  return app;
}
