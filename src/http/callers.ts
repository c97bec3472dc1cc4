import type { TLSSocket } from 'node:tls';
import type { Context } from 'hono';

// Who called a webhook (docs/security.md#who-may-call-the-webhooks): only a caller known to be
// kube-apiserver may make a review write (an approval, a reservation, an instance ID, a status).

/** Whether the request's caller is known to be kube-apiserver. */
export type CallerCheck = (c: Context) => boolean;

/** The socket a request came on, where it came from a real listener (not app.request in a test). */
function socketOf(c: Context): TLSSocket | undefined {
  return (c.env as { incoming?: { socket?: TLSSocket } } | undefined)?.incoming?.socket;
}

/**
 * certificate: the TLS handshake verified a client certificate against admission.tls.clientCAFile;
 * network: the operator asserts only kube-apiserver reaches the port (admission.trustNetwork); none: no caller is.
 */
export function callerCheck(mode: 'certificate' | 'network' | 'none'): CallerCheck {
  if (mode === 'network') return () => true;
  if (mode === 'none') return () => false;
  return (c) => socketOf(c)?.authorized === true;
}

/** Every caller taken as kube-apiserver: for routes reached in process (tests, benches), never a listener's default. */
export const trustedCaller: CallerCheck = () => true;
