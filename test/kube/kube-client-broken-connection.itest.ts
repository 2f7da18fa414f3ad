/**
 * A connection to the real API server that breaks under a request (reset, as a restarting API server
 * or a load balancer dropping it does), through a relay on loopback: a GET is sent again a second
 * later, as client-go does, and answered; a write is not, since the server may have done it.
 */
import { KubeTransportError } from '../../src/kube/kube-api-error.js';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { loadKubeConfig } from '../../src/kube/load-kube-config.js';
import { startBreakingRelay, type BreakingRelay } from '../harness/breaking-relay.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

const namespace = uniqueName('broken-conn');
const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;
let relay: BreakingRelay;

beforeAll(async () => {
  await createNamespace(adminKubeConfig(), namespace);
  relay = await startBreakingRelay();
});
afterAll(() => relay.close());

/** A client through the relay, recording each request it sends, resends included. */
function relayedClient(sent: string[]): KubeClient {
  return createKubeClient({
    credentials: createKubeCredentials(loadKubeConfig({}, relay.kubeconfigPath).kubeConfig),
    onRequest: (method, path) => sent.push(`${method} ${path}`),
  });
}

describe('a request whose connection breaks', () => {
  it('is a GET: sent again on a new connection and answered', async () => {
    const sent: string[] = [];
    const client = relayedClient(sent);
    // One answered GET first, so the broken one goes on a kept-alive connection, as at rest.
    await client.request({ method: 'GET', path: configMaps });
    relay.breakNextRequest();
    const brokenBefore = relay.broken();
    const list = (await client.request({ method: 'GET', path: configMaps })) as { kind: string };
    expect(list.kind).toBe('ConfigMapList');
    expect(relay.broken()).toBe(brokenBefore + 1);
    expect(sent).toEqual([`GET ${configMaps}`, `GET ${configMaps}`, `GET ${configMaps}`]);
  });

  it('is a write: not sent again; the error names the request', async () => {
    const sent: string[] = [];
    const client = relayedClient(sent);
    relay.breakNextRequest();
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'once' } });
    const failure = await client.request({ method: 'POST', path: configMaps, body }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KubeTransportError);
    expect((failure as Error).message).toContain(`POST ${configMaps}`);
    expect(sent).toEqual([`POST ${configMaps}`]);
  });
});
