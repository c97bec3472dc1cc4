import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import type { Extender } from '../extender/extender.js';
import { BadRequest, parseExtenderArgs, type ExtenderArgs } from '../extender/protocol.js';
import type { Metrics } from '../metrics.js';

export type Verb = 'filter' | 'prioritize';

/** Reads and validates a JSON body; a 400 names the field that is wrong. */
export async function readArgs(c: Context): Promise<ExtenderArgs> {
  const text = await c.req.text();
  if (!text.trim()) throw new BadRequest('(body)', 'empty body: expected ExtenderArgs JSON');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new BadRequest('(body)', `malformed JSON: ${(err as Error).message}`);
  }
  return parseExtenderArgs(body);
}

export function badRequest(c: Context, err: BadRequest) {
  return c.json({ error: 'bad request', field: err.field, message: err.message }, 400);
}

/** The extender listener: the verbs at the URL root, as kube-scheduler's urlPrefix expects. */
export function extenderRoutes(ext: Extender, metrics: Metrics, log: Logger, bodyLimitBytes: number): Hono {
  const app = new Hono();

  const verb = (name: Verb, answer: (args: ExtenderArgs) => unknown) => [
    bodyLimit({
      maxSize: bodyLimitBytes,
      onError: (c) => {
        metrics.badRequests.inc({ verb: name, status: '413' });
        return c.json({ error: 'payload too large', limitBytes: bodyLimitBytes }, 413);
      },
    }),
    async (c: Context) => {
      const done = metrics.requestDuration.startTimer({ verb: name });
      try {
        return c.json(answer(await readArgs(c)));
      } catch (err) {
        if (err instanceof BadRequest) {
          metrics.badRequests.inc({ verb: name, status: '400' });
          return badRequest(c, err);
        }
        throw err;
      } finally {
        done();
      }
    },
  ] as const;

  app.post('/filter', ...verb('filter', (a) => ext.filter(a)));
  app.post('/prioritize', ...verb('prioritize', (a) => ext.prioritize(a)));
  app.notFound((c) => c.json({ error: 'not found', message: `no route ${c.req.method} ${c.req.path}; the verbs are POST /filter and POST /prioritize` }, 404));
  app.onError((err, c) => {
    log.error({ err: err.message, stack: err.stack, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal error', message: err.message }, 500);
  });
  return app;
}
