/**
 * The real API server turning a request away with 429 and `Retry-After`: API Priority and Fairness
 * with a priority level of no seats of its own, which runs one request at a time (the one it lets in
 * when nothing runs) and rejects the rest rather than queue them. A ConfigMap write held by an
 * admission webhook keeps that one seat taken, so every other request of the user is turned away
 * until the webhook lets the write go. Our client sends a turned-away request again after the wait
 * the server names, as client-go does, and gives up after client-go's 10 resends.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { waitFor } from '../e2e/wait-for.js';
import { oneSeatFlow, type OneSeatFlow } from '../harness/flow-control.js';
import { startSlowAdmissionWebhook, type SlowAdmissionWebhook } from '../harness/slow-admission-webhook.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

const namespace = uniqueName('retry-after');
const user = `${namespace}-user`;
const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;
let flow: OneSeatFlow;
const admin = createKubeClient({
  credentials: createKubeCredentials(adminKubeConfig()),
});

/** The user's client, recording each request it sends (method and path), resends included. */
function userClient(sent: string[]): KubeClient {
  return createKubeClient({
    credentials: createKubeCredentials(adminKubeConfig()),
    impersonateUser: user,
    onRequest: (method, path) => sent.push(`${method} ${path}`),
  });
}

const configMap = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

beforeAll(async () => {
  await createNamespace(adminKubeConfig(), namespace);
  const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'configmaps' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create'] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'configmaps' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmaps' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
  const probe = userClient([]);
  flow = await oneSeatFlow(admin, namespace, { kind: 'User', user: { name: user } }, () =>
    probe.request({ method: 'GET', path: configMaps }),
  );
});

afterAll(() => flow.remove());

describe('a request the API server asks to send again later (429, Retry-After)', () => {
  let webhook: SlowAdmissionWebhook;
  beforeEach(async () => {
    webhook = await startSlowAdmissionWebhook({ namespace, timeoutSeconds: 30 });
  });
  afterEach(() => webhook.close());

  /** A write of the user that the webhook holds, taking the priority level's one seat until released. */
  async function takeTheSeat(name: string): Promise<{ held: Promise<unknown> }> {
    const held = userClient([]).request({ method: 'POST', path: configMaps, body: configMap(name) });
    await waitFor('the webhook to hold the write', () =>
      Promise.resolve(webhook.inFlight() === 1 || undefined),
    );
    return { held }; // in an object: an async function returning the promise would wait for it
  }

  it('is sent again after the wait the server names, and succeeds once the server takes it', async () => {
    const { held } = await takeTheSeat('held');
    const sent: string[] = [];
    const listing = userClient(sent).request({ method: 'GET', path: configMaps });
    await waitFor('the list to be turned away and sent again', () =>
      Promise.resolve(sent.length >= 2 || undefined),
    );
    webhook.release();
    await held;
    const list = (await listing) as { items: { metadata: { name: string } }[] };
    // Answered after the held write: the resend was the request the server took.
    expect(list.items.map((item) => item.metadata.name)).toContain('held');
    expect(sent.every((request) => request === `GET ${configMaps}`)).toBe(true);
    expect(await flow.counted('rejected')).toBeGreaterThan(0);
  }, 60_000);

  it("gives up after client-go's 10 resends with the server's 429", async () => {
    const { held } = await takeTheSeat('held-long');
    const sent: string[] = [];
    const started = Date.now();
    const failure = await userClient(sent)
      .request({ method: 'GET', path: configMaps })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const waited = Date.now() - started;
    webhook.release();
    await held;
    expect(failure).toBeInstanceOf(KubeApiError);
    expect((failure as KubeApiError).status).toBe(429);
    expect(sent).toHaveLength(11);
    // Each resend waited the second APF names; none was sent at once.
    expect(waited).toBeGreaterThanOrEqual(10 * 1000);
  }, 90_000);
});
