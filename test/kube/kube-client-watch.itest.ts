import { KubeApiError } from '../../src/kube/kube-api-error.js';
import { createKubeClient, type KubeMethod } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { startSupervisedInformer } from '../../src/kube/supervised-informer.js';
import { isJsonObject } from '../../src/manifests/json-value.js';
import { waitFor } from '../e2e/wait-for.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

/** A client on the test cluster that records the requests it sends. */
function recordingClient(impersonateUser?: string) {
  const sent: { method: KubeMethod; path: string }[] = [];
  const client = createKubeClient({
    credentials: createKubeCredentials(adminKubeConfig()),
    onRequest: (method, path) => sent.push({ method, path }),
    ...(impersonateUser === undefined ? {} : { impersonateUser }),
  });
  return { client, sent };
}

const configMap = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

const nameOf = (object: unknown) =>
  isJsonObject(object) && isJsonObject(object['metadata']) ? object['metadata']['name'] : undefined;

describe('the kube client watch', () => {
  const namespace = uniqueName('watch');
  const collection = `/api/v1/namespaces/${namespace}/configmaps`;
  beforeAll(() => createNamespace(adminKubeConfig(), namespace));

  it('streams events from a resourceVersion, counts itself as a GET and ends with the server', async () => {
    const { client, sent } = recordingClient();
    const list = await client.request({ method: 'GET', path: collection });
    const version =
      isJsonObject(list) && isJsonObject(list['metadata']) ? list['metadata']['resourceVersion'] : '';
    await client.request({ method: 'POST', path: collection, body: configMap('first') });
    const events: { type: string; name: unknown }[] = [];
    // timeoutSeconds=2: the server ends the watch, which is a normal end.
    await client.watch({
      path: collection,
      query: { resourceVersion: String(version), timeoutSeconds: '2' },
      onEvent: (type, object) => events.push({ type, name: nameOf(object) }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(events).toEqual([{ type: 'ADDED', name: 'first' }]);
    expect(sent.filter((request) => request.path === collection).map((request) => request.method)).toEqual([
      'GET',
      'POST',
      'GET',
    ]);
  });

  it('rejects with the signal reason when aborted while the stream is open', async () => {
    const { client } = recordingClient();
    const stop = new AbortController();
    const reason = new Error('stop watching');
    const watching = client.watch({
      path: collection,
      query: { timeoutSeconds: '60' },
      onEvent: (type) => {
        // The first event (the ConfigMap that exists) proves the stream is open.
        if (type === 'ADDED') stop.abort(reason);
      },
      signal: stop.signal,
    });
    await expect(watching).rejects.toBe(reason);
  });

  it('watches as the impersonated user, so RBAC refuses what that user may not watch', async () => {
    const { client } = recordingClient(`system:serviceaccount:${namespace}:nobody`);
    const refused = client.watch({
      path: collection,
      onEvent: () => undefined,
      signal: AbortSignal.timeout(30_000),
    });
    await expect(refused).rejects.toBeInstanceOf(KubeApiError);
    await expect(refused).rejects.toMatchObject({ status: 403 });
  });

  it('lists and watches metadata alone when asked to, so no object arrives with its data', async () => {
    const { client } = recordingClient();
    await client.request({ method: 'POST', path: collection, body: configMap('listed') });
    const seen: { kind: unknown; name: unknown; data: unknown; version: unknown }[] = [];
    const stop = new AbortController();
    const informer = startSupervisedInformer({
      client,
      path: collection,
      metadataOnly: true,
      logger: { info: () => undefined, warn: () => undefined, debug: () => undefined },
      signal: stop.signal,
      transform: (object) => {
        const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
        seen.push({
          kind: object['kind'],
          name: metadata['name'],
          data: object['data'],
          version: metadata['resourceVersion'],
        });
        return object;
      },
      onEvent: () => undefined,
    });
    try {
      await informer.synced;
      await waitFor('the watch open', async () => (informer.isWatching() ? true : undefined));
      await client.request({ method: 'POST', path: collection, body: configMap('metadata-only') });
      await waitFor('the new ConfigMap watched', async () =>
        informer.get(`${namespace}/metadata-only`) === undefined ? undefined : true,
      );
    } finally {
      stop.abort();
      await informer.done;
    }
    const listed = seen.find((object) => object.name === 'listed');
    const watched = seen.find((object) => object.name === 'metadata-only');
    // The LIST's items carry no kind of their own; the WATCH's objects are PartialObjectMetadata.
    expect(listed).toMatchObject({ data: undefined, version: expect.any(String) });
    expect(watched).toEqual({
      kind: 'PartialObjectMetadata',
      name: 'metadata-only',
      data: undefined,
      version: expect.any(String),
    });
    // The same ConfigMap read whole has its data: the informer asked for less, not the server.
    expect(await client.request({ method: 'GET', path: `${collection}/listed` })).toMatchObject({
      data: { a: '1' },
    });
  }, 60_000);

  it('resumes a quiet watch each time the server ends it, not taking its silence for a stall', async () => {
    // A collection nobody writes: the server sends it nothing, no bookmark either, until the
    // watch's timeoutSeconds. Silence longer than the stall timeout is no dead connection.
    const quiet = `/api/v1/namespaces/${namespace}/resourcequotas`;
    const { client, sent } = recordingClient();
    const said: string[] = [];
    const record = (_object: object, message: string) => void said.push(message);
    const stop = new AbortController();
    const informer = startSupervisedInformer({
      client,
      path: quiet,
      logger: { info: record, warn: record, debug: () => undefined },
      signal: stop.signal,
      stallTimeoutMs: 1_000,
      watchTimeoutSeconds: 3,
      onEvent: () => undefined,
    });
    await informer.synced;
    const requests = () => sent.filter((request) => request.path === quiet).length;
    // The LIST, then three watches: two the server ended after 3 s of silence each, resumed.
    await waitFor('three watches of the quiet collection', async () => (requests() >= 4 ? true : undefined));
    stop.abort();
    await informer.done;
    expect(said).toEqual([]);
  }, 60_000);
});
