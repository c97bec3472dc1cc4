import { pino, type Logger } from 'pino';

/** Structured JSON logs on stdout. Never log tokens or kubeconfig contents. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { app: 'zonekeeper' }, timestamp: pino.stdTimeFunctions.isoTime });
}

export type { Logger };
