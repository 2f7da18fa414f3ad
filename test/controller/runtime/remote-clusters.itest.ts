/**
 * The connections of the remote cluster cache against the real API server: a TCP relay in front of
 * it (the test's own server) counts the sockets the controller holds open, and sees the old
 * connection's sockets closed when its Secret changes and when the bound drops it.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { remoteClusters, type RemoteCluster } from '../../../src/controller/runtime/remote-clusters.js';
import { createKubeClient } from '../../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../../src/kube/kube-credentials.js';
import { currentClusterOf, currentUserOf } from '../../../src/kube/kubeconfig-model.js';
import { loadKubeConfig } from '../../../src/kube/load-kube-config.js';
import { createLogger } from '../../../src/observability/create-logger.js';
import { adminKubeconfigPath } from '../../harness/test-cluster.js';
import { waitFor } from '../../e2e/wait-for.js';

/** Relays TCP to the API server and counts the connections open through it. */
async function countingRelay(
  target: URL,
): Promise<{ server: Server; open: () => number; port: number; closeAll: () => void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    const end = () => {
      sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const closeAll = () => sockets.forEach((socket) => socket.destroy());
  return { server, open: () => sockets.size, port, closeAll };
}

describe('remoteClusters: connections to remote clusters', () => {
  const admin = loadKubeConfig({}, adminKubeconfigPath()).kubeConfig;
  const apiServer = currentClusterOf(admin);
  const token = currentUserOf(admin)?.token;
  let relay: Awaited<ReturnType<typeof countingRelay>>;

  beforeAll(async () => {
    if (apiServer === undefined) throw new Error('admin kubeconfig: no cluster');
    relay = await countingRelay(new URL(apiServer.server));
  });
  afterAll(async () => {
    relay.closeAll();
    await new Promise<void>((resolve) => relay.server.close(() => resolve()));
  });

  /** The admin kubeconfig through the relay; `tag` makes the text (so the cache entry) differ. */
  const kubeconfig = (tag: string) =>
    JSON.stringify({
      clusters: [
        {
          name: 'b',
          cluster: {
            server: `https://127.0.0.1:${relay.port}`,
            'certificate-authority-data': apiServer?.caData,
          },
        },
      ],
      users: [{ name: tag, user: { token } }],
      contexts: [{ name: 'b', context: { cluster: 'b', user: tag } }],
      'current-context': 'b',
    });

  const connectWith = (maxClusters: number) =>
    remoteClusters({
      policy: { allowExec: false, allowFiles: false, allowedHosts: ['127.0.0.1'] },
      parentClient: createKubeClient({ credentials: createKubeCredentials(admin) }),
      logger: createLogger({ level: 'silent' }),
      countRequest: () => {},
      maxClusters,
    });

  const reach = (cluster: RemoteCluster) => cluster.reachable(30_000, new AbortController().signal);
  const openSockets = (n: number) =>
    waitFor(`${n} socket(s) open to the API server (${relay.open()} now)`, async () =>
      relay.open() === n ? true : undefined,
    );

  it('closes the sockets of a kubeconfig whose Secret changed, and of one the bound dropped', async () => {
    const connect = connectWith(1);
    await reach(connect(kubeconfig('first'), 'Secret team-a/cluster-b, key value'));
    expect(relay.open()).toBe(1);
    // The Secret now holds another kubeconfig: the old connection's socket goes, the new one opens one.
    const rotated = connect(kubeconfig('second'), 'Secret team-a/cluster-b, key value');
    await openSockets(0);
    await reach(rotated);
    await openSockets(1);
    // Another Secret, past the bound of one: the least recently used entry and its socket go.
    await reach(connect(kubeconfig('other'), 'Secret team-b/cluster-b, key value'));
    await openSockets(1);
    // Still the one socket of the entry kept, reused: a second probe opens none.
    await reach(connect(kubeconfig('other'), 'Secret team-b/cluster-b, key value'));
    expect(relay.open()).toBe(1);
  });
});
