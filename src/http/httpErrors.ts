import type { Context } from 'hono';
import { HttpError } from '../common/errors.js';

// One mapping from errors to answers for every listener: `{error, field?, message, ...details}`.

/** The JSON answer for an HttpError. */
export function errorResponse(c: Context, err: HttpError, headers?: Record<string, string>): Response {
  const body = { error: err.error, ...(err.field !== undefined ? { field: err.field } : {}), message: err.message, ...err.details };
  return c.json(body, err.status, headers);
}

/** An answer with status and body from the arguments: the routes' 4xx/5xx that are not thrown. */
export function failWith(
  c: Context, status: HttpError['status'], error: string, message: string,
  o: { field?: string; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Response {
  return errorResponse(c, new HttpError(status, error, message, o.field, o.details), o.headers);
}

export { HttpError };
