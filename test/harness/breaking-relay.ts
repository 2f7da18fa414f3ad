/**
 * A TCP relay on loopback in front of the real API server, which can break a connection the way a
 * restarting API server or a load balancer does: armed with breakNextRequest(), the next bytes a
 * client sends on any of its connections are not passed on, and that connection is reset (RST).
 * Everything else goes through untouched, TLS included (the relay never reads it).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { adminKubeconfigPath, kubeconfigDir } from './test-cluster.js';

export interface BreakingRelay {
  /** The admin kubeconfig, with its server replaced by the relay's address. */
  readonly kubeconfigPath: string;
  /** The next request sent through the relay, on any connection, has its connection reset. */
  breakNextRequest(): void;
  /** Connections reset so far. */
  broken(): number;
  close(): Promise<void>;
}

export async function startBreakingRelay(): Promise<BreakingRelay> {
  const adminText = await readFile(adminKubeconfigPath(), 'utf8');
  const server = /server: (https:\/\/[^\s]+)/.exec(adminText)?.[1];
  if (server === undefined) throw new Error('the admin kubeconfig names no https server');
  const target = new URL(server);
  let armed = false;
  let broken = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((incoming) => {
    const outgoing = connect(Number(target.port), target.hostname);
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {
        incoming.destroy();
        outgoing.destroy();
      });
    }
    incoming.on('data', (chunk: Buffer) => {
      if (armed) {
        armed = false;
        broken += 1;
        incoming.resetAndDestroy();
        outgoing.destroy();
        return;
      }
      outgoing.write(chunk);
    });
    outgoing.pipe(incoming);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as AddressInfo;
  const kubeconfigPath = join(await kubeconfigDir('applyset-relay-'), 'kubeconfig');
  await writeFile(kubeconfigPath, adminText.replace(server, `https://127.0.0.1:${port}`), { mode: 0o600 });
  return {
    kubeconfigPath,
    breakNextRequest: () => {
      armed = true;
    },
    broken: () => broken,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}
