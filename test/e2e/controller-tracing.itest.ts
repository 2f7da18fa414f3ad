import type { GitTestServer } from '../harness/git-server.js';
import { startJaegerServer, type JaegerServer, type JaegerSpan } from '../harness/jaeger-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';

// Issue #39: a controller whose OTEL_EXPORTER_OTLP_ENDPOINT names a real Jaeger sends each reconcile as a
// trace. The reconcile that created the set's objects is found through Jaeger's query API, as the Jaeger
// UI finds it, with the spans of its steps, and its id is the trace_id of the controller's log line.

const tag = (span: JaegerSpan | undefined, key: string): unknown =>
  span?.tags.find((entry) => entry.key === key)?.value;

describe('the controller with tracing on', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-tracing');
  let git: GitTestServer | undefined;
  let jaeger: JaegerServer | undefined;
  let controller: ControllerProcess;

  beforeAll(async () => {
    jaeger = await startJaegerServer();
    ({ git, controller } = await startControllerWithRepository(
      c,
      namespace,
      { 'a.yaml': configMapYaml('a', { v: '1' }), 'b.yaml': configMapYaml('b', { v: '1' }) },
      // The batch of spans goes out half a second after it starts, not the SDK's default five.
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '500' } },
    ));
  }, 120_000);

  afterAll(async () => {
    await stopControllersAndGit(git);
    await jaeger?.close();
  });

  it("sends the reconcile's trace, its fetch, objects, requests and status write, with the log's trace id", async () => {
    const server = jaeger as JaegerServer;
    await createApplySet(c, namespace, 'traced', { url: (git as GitTestServer).url });
    const commit = await (git as GitTestServer).revParse('main');
    await waitForAppliedCommit(c, namespace, 'traced', commit, 60_000);

    // The reconcile that created the objects: an `apply.object` span whose result is `created`.
    const trace = await waitFor(
      'the trace of the reconcile that created the objects',
      async () => {
        const traces = await server.findTraces('applyset-controller', 'reconcile', {
          'applyset.namespace': namespace,
          'applyset.name': 'traced',
        });
        return traces.find((found) =>
          found.spans.some(
            (span) => span.operationName === 'apply.object' && tag(span, 'apply.result') === 'created',
          ),
        );
      },
      60_000,
    );
    const named = (name: string) => trace.spans.filter((span) => span.operationName === name);
    const [root] = named('reconcile');
    const [fetch] = named('source.fetch');
    expect(tag(fetch, 'source.revision')).toBe(`main@sha1:${commit}`);
    expect(tag(fetch, 'source.url')).toBe((git as GitTestServer).url);
    expect(fetch?.references).toEqual([
      expect.objectContaining({ refType: 'CHILD_OF', spanID: root?.spanID }),
    ]);
    expect(named('apply.wave').length).toBeGreaterThan(0);
    const objects = named('apply.object').map((span) => tag(span, 'k8s.object.name'));
    expect(objects.sort()).toEqual(['a', 'b']);
    const writes = named('status.write');
    expect(writes.map((span) => tag(span, 'applyset.ready'))).toContain('True');
    // Each object's request to the API server is a span of its own, beneath that object's span.
    const creates = named('kube.request').filter(
      (span) =>
        tag(span, 'http.request.method') === 'POST' &&
        tag(span, 'url.path') === `/api/v1/namespaces/${namespace}/configmaps`,
    );
    expect(creates).toHaveLength(2);
    const objectSpans = new Set(named('apply.object').map((span) => span.spanID));
    for (const create of creates) {
      expect(objectSpans.has(create.references[0]?.spanID ?? '')).toBe(true);
      expect(tag(create, 'http.response.status_code')).toBe(201);
    }

    // The controller's log line of that reconcile names the same trace.
    const key = `${namespace}/traced`;
    const reconciled = controller.logs.find(
      (line) => line['applyset'] === key && line['msg'] === 'reconciled',
    );
    expect(reconciled?.['trace_id']).toBe(trace.traceID);
  });
});
