import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  createApplySet,
  getApplySet,
  installCrd,
  kubectl,
  stopAllControllers,
  waitFor,
  type ControllerProcess,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// The hygiene grep: with the controller logging at trace, a Git password and the values of Secrets
// the server refuses or the decoder cannot read appear in no log line, Event or status, while the
// messages still say which file or object failed and why. The controller runs as the chart installs it
// locked down; the ApplySets apply as their namespace's deployer account.

const GIT_PASSWORD = 'GitPassMarker7q2';
const BAD_BASE64 = 'not-base64!B64Marker9z';
const NEAR_SYNTAX = 'JsonNearMarker3k';
const APPLIED_VALUE = 'AppliedMarker5w';
const MARKERS = [GIT_PASSWORD, BAD_BASE64, 'B64Marker9z', NEAR_SYNTAX, APPLIED_VALUE];
// A parser's snippet quotes about ten characters: the first and last eight of each marker count too.
const FORBIDDEN = MARKERS.flatMap((marker) => [
  marker.slice(0, 8),
  marker.slice(-8),
  Buffer.from(marker).toString('base64'),
]);

const secretYaml = (name: string, body: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n${body}`;

describe('no Secret value or Git credential reaches logs, Events or status', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-hygiene');
  let git: GitTestServer;
  let controller: ControllerProcess;
  let lockedDown: LockedDownController | undefined;

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    git = await startGitServer({
      auth: { username: 'deploy', password: GIT_PASSWORD },
      files: {
        'server-refuses/bad.yaml': secretYaml('bad-base64', `data:\n  token: "${BAD_BASE64}"\n`),
        'server-refuses/good.yaml': secretYaml('applied', `stringData:\n  token: "${APPLIED_VALUE}"\n`),
        'syntax/secret.json':
          `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "broken"},\n` +
          // An unquoted value: JSON.parse's message quotes the ten characters around it. The stray `]`
          // makes it no YAML either (kubectl, and so we, read a file that is no JSON again as YAML).
          ` "stringData": {"token": ${NEAR_SYNTAX}]}}\n`,
      },
    });
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'git-creds', annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: { username: 'deploy', password: GIT_PASSWORD },
      },
    });
    await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [coreRule('configmaps', 'secrets')]);
    lockedDown = await startLockedDownController({ namespace, env: { LOG_LEVEL: 'trace' } });
    controller = lockedDown.process;
  });

  afterAll(async () => {
    await stopAllControllers();
    await git.close();
    await lockedDown?.cleanup();
  });

  it('redacts refused Secret values and never quotes manifest text, yet names what failed', async () => {
    await createApplySet(c, namespace, 'refused', {
      url: git.url,
      path: 'server-refuses',
      secretName: 'git-creds',
    });
    await createApplySet(c, namespace, 'syntax', { url: git.url, path: 'syntax', secretName: 'git-creds' });

    const refused = await waitFor(`ApplySet ${namespace}/refused reports its failed Secret`, async () => {
      const view = await getApplySet(c, namespace, 'refused');
      return (view?.status?.errors?.items.length ?? 0) > 0 ? view : undefined;
    });
    expect(refused.status?.errors?.items).toEqual([
      expect.objectContaining({
        object: expect.stringContaining('bad-base64'),
        message: expect.stringContaining('illegal base64 data'),
      }),
    ]);
    const applied = await c.core.readNamespacedSecret({ namespace, name: 'applied' });
    expect(Buffer.from(applied.data?.['token'] ?? '', 'base64').toString()).toBe(APPLIED_VALUE);

    const syntax = await waitFor(`ApplySet ${namespace}/syntax Stalled`, async () => {
      const view = await getApplySet(c, namespace, 'syntax');
      return condition(view, 'Stalled')?.status === 'True' ? view : undefined;
    });
    expect(condition(syntax, 'Ready')?.message).toMatch(
      /secret\.json \(document 0\) line 2 column 26: a value was expected/,
    );

    // Events are written after status; wait until both ApplySets have some before grepping.
    const events = await waitFor('Events of both ApplySets', async () => {
      const text = await kubectl(['get', 'events', '-n', namespace, '-o', 'json']);
      return text.includes('refused') && text.includes('syntax') ? text : undefined;
    });
    expect(events).toMatch(/illegal base64 data/);

    const haystacks: Record<string, string> = {
      logs: controller.logs.map((line) => JSON.stringify(line)).join('\n'),
      events,
      'refused status': JSON.stringify(await getApplySet(c, namespace, 'refused')),
      'syntax status': JSON.stringify(await getApplySet(c, namespace, 'syntax')),
    };
    // The most verbose lines it writes (debug: steps and fetches) are in the haystack too.
    expect(haystacks['logs']).toMatch(/"level":20/);
    const leaks = Object.entries(haystacks).flatMap(([where, text]) =>
      FORBIDDEN.filter((marker) => text.includes(marker)).map((marker) => `${marker} in ${where}`),
    );
    expect(leaks).toEqual([]);
  });
});
