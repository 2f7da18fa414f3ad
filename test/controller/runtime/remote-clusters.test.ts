import { createServer } from 'node:net';
import { RemoteClusterUnreachableError } from '../../../src/controller/remote-cluster-unreachable-error.js';
import { RemoteKubeConfigRefusedError } from '../../../src/controller/remote-kube-config.js';
import { remoteClusters } from '../../../src/controller/runtime/remote-clusters.js';
import { createKubeClient } from '../../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../../src/kube/kube-credentials.js';
import { parseKubeConfigText } from '../../../src/kube/kubeconfig-parse.js';
import { createLogger } from '../../../src/observability/create-logger.js';

const FROM = 'Secret team-a/cluster-b, key value';

function kubeconfig(server: string, token: string): string {
  return JSON.stringify({
    clusters: [{ name: 'b', cluster: { server } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'b', context: { cluster: 'b', user: 'u' } }],
    'current-context': 'b',
  });
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('remoteClusters', () => {
  // The parent's client: never called here (no engine runs).
  const parentClient = createKubeClient({
    credentials: createKubeCredentials(parseKubeConfigText(kubeconfig('https://a.example', 'a'), '/a')),
  });
  const connect = remoteClusters({
    policy: { allowExec: false, allowFiles: false, allowedHosts: ['127.0.0.1'] },
    parentClient,
    logger: createLogger({ level: 'silent' }),
    countRequest: () => {},
  });

  it('keeps one cluster per kubeconfig, and makes a new one when the Secret holds another', () => {
    const first = connect(kubeconfig('https://127.0.0.1:6443', 'one'), FROM);
    expect(connect(kubeconfig('https://127.0.0.1:6443', 'one'), FROM)).toBe(first);
    const rotated = connect(kubeconfig('https://127.0.0.1:6443', 'two'), FROM);
    expect(rotated).not.toBe(first);
    expect(rotated.server).toBe('https://127.0.0.1:6443');
    // Another namespace's Secret with the same kubeconfig: its own entry, whose messages name it.
    expect(
      connect(kubeconfig('https://127.0.0.1:6443', 'one'), 'Secret team-b/cluster-b, key value'),
    ).not.toBe(first);
  });

  it('refuses a kubeconfig the policy refuses, before any connection', () => {
    expect(() => connect(kubeconfig('https://10.0.0.1', 't'), FROM)).toThrow(RemoteKubeConfigRefusedError);
  });

  it('refuses a client certificate without its key as KubeConfigRefused, not a failed apply', () => {
    const text = JSON.stringify({
      clusters: [{ name: 'b', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'u', user: { 'client-certificate-data': 'Yw==' } }],
      contexts: [{ name: 'b', context: { cluster: 'b', user: 'u' } }],
      'current-context': 'b',
    });
    expect(() => connect(text, FROM)).toThrow(RemoteKubeConfigRefusedError);
    expect(() => connect(text, FROM)).toThrow(
      `the kubeconfig of ${FROM} is refused: user "u" of kubeconfig ${FROM} has a client certificate without its pair`,
    );
  });

  it('says a cluster that does not answer is unreachable, naming its server and the Secret', async () => {
    const server = `https://127.0.0.1:${await closedPort()}`;
    const cluster = connect(kubeconfig(server, 't'), FROM);
    const probe = cluster.reachable(2_000, new AbortController().signal);
    await expect(probe).rejects.toThrow(RemoteClusterUnreachableError);
    await expect(probe).rejects.toThrow(
      `remote cluster ${server} (the kubeconfig of ${FROM}) is unreachable: `,
    );
  });
});
