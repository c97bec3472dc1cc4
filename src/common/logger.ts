import { pino, type Logger } from 'pino';

// Structured JSON logs on stdout, for collectors; the same records as one readable line each
// when stdout is a terminal. Never log tokens or kubeconfig contents. Written synchronously (stdout
// is on Linux): pino's asynchronous default let a record overtake another at process.exit.

export interface LogSink { write(line: string): unknown; isTTY?: boolean }

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '90' }, 20: { name: 'DEBUG', color: '36' }, 30: { name: 'INFO ', color: '32' },
  40: { name: 'WARN ', color: '33' }, 50: { name: 'ERROR', color: '31' }, 60: { name: 'FATAL', color: '35' },
};

/** Fields every record has, shown in the line's head rather than as key=value. */
const HEAD = new Set(['level', 'time', 'msg', 'app']);

const value = (v: unknown) => (typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v));

/** One pino JSON record as `12:00:01.234 INFO  message key=value ...`, every field kept. */
export function prettyLine(json: string, color: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json);
  } catch {
    return json;
  }
  const level = LEVELS[rec.level as number] ?? { name: String(rec.level), color: '0' };
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 23) : String(rec.time ?? '');
  const fields = Object.entries(rec).filter(([k]) => !HEAD.has(k)).map(([k, v]) => `${k}=${value(v)}`);
  const name = color ? `\u001b[${level.color}m${level.name}\u001b[0m` : level.name;
  return `${time} ${name} ${rec.msg ?? ''}${fields.length ? ` ${fields.join(' ')}` : ''}\n`;
}

/** JSON lines on `out`; readable lines when `out` is a terminal. */
export function createLogger(level: string, out: LogSink = process.stdout): Logger {
  const opts = { level, base: { app: 'zonekeeper' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (!out.isTTY) return pino(opts, { write: (line: string) => out.write(line) });
  return pino(opts, { write: (line: string) => out.write(prettyLine(line, true)) });
}

export type { Logger };
