import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { splitHostPort } from '../config.js';

export interface TlsFiles { certFile: string; keyFile: string; clientCAFile: string }

export interface Listener {
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then drops what is left after graceMs. */
  close(graceMs: number): Promise<void>;
}

/** Serves a hono app on HOST:PORT; TLS when cert and key are set, mutual TLS with a client CA. */
export async function listen(app: Hono, hostPort: string, tls?: TlsFiles): Promise<Listener> {
  const { host, port } = splitHostPort(hostPort);
  const secure = !!(tls?.certFile && tls.keyFile);
  const server = (secure
    ? createAdaptorServer({
      fetch: app.fetch,
      createServer: https.createServer,
      serverOptions: {
        cert: readFileSync(tls!.certFile), key: readFileSync(tls!.keyFile),
        ...(tls!.clientCAFile ? { ca: readFileSync(tls!.clientCAFile), requestCert: true, rejectUnauthorized: true } : {}),
      },
    })
    : createAdaptorServer({ fetch: app.fetch })) as http.Server;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${secure ? 'https' : 'http'}://${shownHost}:${actual}`,
    port: actual,
    close(graceMs) {
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
