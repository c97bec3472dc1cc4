// A TCP proxy between zonekeeper and kube-apiserver that can cut every connection through it at
// once: what a load balancer's reset or a network blip does to long-running watches.
import net from 'node:net';

export interface CuttingProxy {
  port: number;
  /** Resets every open connection; new ones go through as before. Returns how many were cut. */
  cut(): number;
  close(): Promise<void>;
}

export async function cuttingProxy(targetPort: number): Promise<CuttingProxy> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
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
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      const n = open.size / 2;
      for (const s of open) s.resetAndDestroy();
      return Math.round(n);
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
