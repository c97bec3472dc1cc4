// A TCP proxy that can cut every connection through it at once (what a load balancer's reset or
// a network blip does to long-running watches), or refuse every connection for a while (an
// endpoint unreachable): between zonekeeper and kube-apiserver, and before the admission webhook.
import net from 'node:net';

export interface CuttingProxy {
  port: number;
  /** Resets every open connection; new ones go through as before. Returns how many were cut. */
  cut(): number;
  /** While `true`, every open connection is reset and each new one refused (reset at once). */
  block(on: boolean): void;
  close(): Promise<void>;
}

export async function cuttingProxy(targetPort: number): Promise<CuttingProxy> {
  const open = new Set<net.Socket>();
  let blocked = false;
  const server = net.createServer((client) => {
    if (blocked) return void client.resetAndDestroy();
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        open.delete(a);
        b.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    const n = open.size / 2;
    for (const s of open) s.resetAndDestroy();
    return Math.round(n);
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    block(on) {
      blocked = on;
      if (on) cut();
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
