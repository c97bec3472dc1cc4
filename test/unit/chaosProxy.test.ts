import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { cuttingProxy, type CuttingProxy } from '../chaos/proxy.js';

// The robustness run's proxy (test/chaos/proxy.ts): what goes through it, and what a cut and a
// block do to a connection, against a real echo server on loopback.

/** Connects, sends `text`, and resolves with what came back before the connection ended ('closed' if it ended with nothing). */
function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    s.on('data', (d) => {
      resolve(String(d));
      s.destroy();
    });
    s.on('error', () => resolve('closed'));
    s.on('close', () => resolve('closed'));
  });
}

describe('the robustness run\'s proxy', () => {
  let echo: net.Server;
  let proxy: CuttingProxy;
  before(async () => {
    echo = net.createServer((s) => s.on('error', () => undefined).pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    proxy = await cuttingProxy((echo.address() as net.AddressInfo).port);
  });
  after(async () => {
    await proxy.close();
    await new Promise((r) => echo.close(r));
  });

  it('passes bytes both ways', async () => {
    assert.equal(await roundTrip(proxy.port, 'hello'), 'hello');
  });

  it('a cut resets the open connections; new ones go through', async () => {
    const open = net.connect(proxy.port, '127.0.0.1');
    await new Promise<void>((r) => open.write('x', () => open.once('data', () => r())));
    const ended = new Promise<void>((r) => open.on('close', () => r()));
    open.on('error', () => undefined);
    assert.equal(proxy.cut(), 1);
    await ended;
    assert.equal(await roundTrip(proxy.port, 'again'), 'again');
  });

  it('blocked, it resets the open connections and refuses new ones, until unblocked', async () => {
    const open = net.connect(proxy.port, '127.0.0.1');
    await new Promise<void>((r) => open.write('x', () => open.once('data', () => r())));
    const ended = new Promise<void>((r) => open.on('close', () => r()));
    open.on('error', () => undefined);
    proxy.block(true);
    await ended;
    assert.equal(await roundTrip(proxy.port, 'refused'), 'closed');
    proxy.block(false);
    assert.equal(await roundTrip(proxy.port, 'back'), 'back');
  });
});
