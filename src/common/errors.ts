import type { z } from 'zod';

/** The base of zonekeeper's errors: `name` is the class's, `cause` is kept. */
export class ZonekeeperError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A YAML parser's message with its excerpt: the line at fault and the caret under its column, indented, no blank lines. */
export function yamlProblem(message: string): string {
  const [head = '', ...excerpt] = message.split('\n');
  return [head, ...excerpt.filter((l) => l.trim() !== '').map((l) => `  ${l}`)].join('\n');
}

/** A file that could not be read, in a user's words ("no such file", "is a directory"). */
export function unreadableFile(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT': return 'no such file';
    case 'EISDIR': return 'is a directory';
    case 'EACCES': return 'not readable (permission denied)';
    default: return err.message;
  }
}

/** A file a flag names that cannot be read, one message for every path flag: `--config FILE: no such file`. */
export class UnreadableFileError extends ZonekeeperError {
  constructor(flag: string, path: string, err: NodeJS.ErrnoException) {
    super(`${flag} ${path}: ${unreadableFile(err)}`, { cause: err });
  }
}

/**
 * An error an HTTP answer reports: its status, a short `error` word, and the field at fault.
 * One type for every 4xx/5xx a route returns (server/httpErrors.ts maps it to a response).
 */
export class HttpError extends ZonekeeperError {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 413 | 415 | 500 | 503,
    readonly error: string,
    message: string,
    readonly field?: string,
    /** Extra keys of the answer's body (a 413's limitBytes). */
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 400: a request refused; `field` is the JSON path of what is wrong. */
export class BadRequest extends HttpError {
  constructor(field: string, message: string) {
    super(400, 'bad request', message, field);
  }
}

/** Names each bad key by its path and says why, e.g. `placement.zoneFallback: Invalid option`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => {
    const path = i.path.join('.');
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${path ? `${path}.` : ''}${k}: unknown key`).join('; ');
    return `${path || '(root)'}: ${i.message}`;
  }).join('; ');
}

/** The first issue of a failed parse as a 400 naming its field. */
export function badRequestOf(error: z.ZodError): BadRequest {
  const issue = error.issues[0]!;
  return new BadRequest(issue.path.join('.') || '(body)', issue.message);
}
