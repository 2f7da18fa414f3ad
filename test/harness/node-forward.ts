/**
 * Makes a server of this machine that listens on loopback (the test Git server) reachable from the node
 * profile's pods: a TCP relay on the host's end of the node's link, the only host address pods reach.
 * Loopback itself stays out of the pods' reach, as it is in a real cluster.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { NodeNetwork } from './node-network.js';

export interface NodeForward {
  /** `url` with its host and port replaced by the relay's, as a pod must spell it. */
  readonly url: string;
  close(): Promise<void>;
}

/** Relays connections to `network.hostAddress:<some port>` on to the host and port of `url`. */
export async function forwardToNode(network: NodeNetwork, url: string): Promise<NodeForward> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((incoming) => {
    const outgoing = connect(Number(target.port), target.hostname);
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      // Either side failing ends both, as a dropped connection would.
      socket.once('error', () => {
        incoming.destroy();
        outgoing.destroy();
      });
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, network.hostAddress, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the relay has no address');
  const relayed = new URL(url);
  relayed.hostname = network.hostAddress;
  relayed.port = String(address.port);
  return {
    url: relayed.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
