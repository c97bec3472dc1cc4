import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { Context } from 'hono';
import { admissionCallers, type Config } from '../common/config.js';

// Who called a webhook (docs/security.md#who-may-call-the-webhooks): only a caller known to be
// kube-apiserver may make a review write (an approval, a reservation, an instance ID, a status).

/** Whether the request's caller is known to be kube-apiserver. */
export type CallerCheck = (c: Context) => boolean;

/** The socket a request came on, where it came from a real listener (not app.request in a test). */
function socketOf(c: Context): TLSSocket | undefined {
  return (c.env as { incoming?: { socket?: TLSSocket } } | undefined)?.incoming?.socket;
}

/** A subject attribute's values: Node gives one as a string, several as an array. */
const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Whether a verified client certificate is one of kube-apiserver's: its CN or one of its O configured. */
function apiServerSubject(cert: PeerCertificate | undefined, tls: Config['admission']['tls']): boolean {
  const subject = cert?.subject as Record<string, string | string[] | undefined> | undefined;
  if (!subject) return false;
  return values(subject.CN).some((cn) => tls.clientCommonNames.includes(cn))
    || values(subject.O).some((o) => tls.clientOrganizations.includes(o));
}

/**
 * certificate: the TLS handshake verified a client certificate against admission.tls.clientCAFile,
 * and its subject is kube-apiserver's (clientCommonNames, clientOrganizations); network: the
 * operator asserts only kube-apiserver reaches the port (admission.trustNetwork); none: no caller is.
 */
export function callerCheck(admission: Config['admission']): CallerCheck {
  const mode = admissionCallers(admission);
  if (mode === 'network') return () => true;
  if (mode === 'none') return () => false;
  return (c) => {
    const socket = socketOf(c);
    return socket?.authorized === true && apiServerSubject(socket.getPeerCertificate(), admission.tls);
  };
}

/** Every caller taken as kube-apiserver: for routes reached in process (tests, benches), never a listener's default. */
export const trustedCaller: CallerCheck = () => true;
