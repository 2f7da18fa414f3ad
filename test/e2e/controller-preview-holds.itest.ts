import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  kubectl,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';
import { GitServerPool } from './git-server-pool.js';

// The preview of an ApplySet the controller would not apply now (suspended, waiting for a dependency)
// or would only report drift for (driftMode Warn): it says so, in the controller's words, and still
// shows what the run would do once it may.

describe('applyset diff --applyset-object of an ApplySet the controller holds back', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-preview-hold');
  const servers = new GitServerPool();
  const user = `system:serviceaccount:${namespace}:applyset-deployer`;
  const n = `-n ${namespace}`;

  const preview = (name: string, ...args: string[]) =>
    runCli(diffCommand, [
      '--applyset-object',
      name,
      '-n',
      namespace,
      '--allowed-source-hosts',
      '127.0.0.1',
      ...args,
    ]);

  /** An ApplySet of `git` with `spec` over the kit's defaults; reconciled only when asked (1h). */
  const create = async (name: string, git: GitTestServer, spec: Record<string, unknown> = {}) =>
    createApplySetWithSpec(c, namespace, name, { url: git.url, interval: '1h' }, spec);

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('says first that a suspended ApplySet is applied nothing, and shows what resuming it then applies', async () => {
    const git = await servers.start({ files: { 'a.yaml': configMapYaml('a', { v: '1' }) } });
    await create('paused', git);
    await waitForAppliedCommit(c, namespace, 'paused', await git.revParse('main'), 60_000);
    await patchApplySet(namespace, 'paused', { spec: { suspend: true } });
    const sha = await git.writeFiles({ 'a.yaml': configMapYaml('a', { v: '2' }) });

    const run = await preview('paused');
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout).toBe(
      [
        `applyset/paused ${n} at main@sha1:${sha}, as ${user}: suspended (spec.suspend), nothing is applied now; once it is: 0 to create, 1 to configure, 0 to prune, 0 unchanged`,
        `suspended (spec.suspend): the controller applies nothing until it is resumed (applyset resume paused ${n}); below is what its run would then do`,
        `~ configmap/a ${n}`,
        '    data.v: "1" → "2"',
        '',
      ].join('\n'),
    );
    const markdown = await preview('paused', '-o', 'markdown');
    expect(markdown.stdout).toContain(
      `### applyset diff: ApplySet \`${namespace}/paused\` at \`main@sha1:${sha}\`\n\n> [!IMPORTANT]\n> **Suspended** (\`spec.suspend\`): the controller applies nothing until it is resumed.\n`,
    );

    // Resumed, the controller does what the preview said it would then do.
    await patchApplySet(namespace, 'paused', { spec: { suspend: false } });
    await waitForAppliedCommit(c, namespace, 'paused', sha, 60_000);
    expect(await configMapData(c, namespace, 'a')).toEqual({ v: '2' });
  });

  it('names the dependency the controller waits for and its Ready reason, and still shows the diff', async () => {
    const git = await servers.start({ files: { 'app.yaml': configMapYaml('app', { v: '1' }) } });
    // A dependency the controller stalls: its account does not exist.
    await create('db', git, { serviceAccountName: 'nobody' });
    await waitFor(
      'db to stall',
      async () =>
        condition(await getApplySet(c, namespace, 'db'), 'Ready')?.reason === 'ServiceAccountNotFound' ||
        undefined,
      60_000,
    );
    await create('app', git, { dependsOn: [{ name: 'db' }] });
    const waiting = await waitFor(
      'app to wait for db',
      async () => {
        const ready = condition(await getApplySet(c, namespace, 'app'), 'Ready');
        return ready?.reason === 'DependencyNotReady' ? ready : undefined;
      },
      60_000,
    );
    const said = `${namespace}/db: Ready=False (ServiceAccountNotFound)`;
    expect(waiting.message).toBe(`waiting for dependencies: ${said}`);

    const run = await preview('app');
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    const sha = await git.revParse('main');
    expect(run.stdout).toBe(
      [
        `applyset/app ${n} at main@sha1:${sha}, as ${user}: waiting for dependencies (DependencyNotReady), nothing is applied now; once it is: 1 to create, 0 to configure, 0 to prune, 0 unchanged`,
        `would wait for dependency ApplySet ${said}`,
        `+ configmap/app ${n} (new)`,
        '',
      ].join('\n'),
    );
    const markdown = await preview('app', '-o', 'markdown');
    expect(markdown.stdout).toContain(
      `> **Waiting for dependencies** (DependencyNotReady): nothing is applied until they are Ready.\n> - ApplySet ${said}\n`,
    );
    expect(await configMapData(c, namespace, 'app')).toBeUndefined();
  });

  it('refuses a dependency of another namespace as the controller does, unless told it allows them', async () => {
    const git = await servers.start({ files: { 'x.yaml': configMapYaml('x', { v: '1' }) } });
    await create('far', git, { dependsOn: [{ name: 'db', namespace: 'elsewhere' }] });
    const refused = await preview('far');
    expect(refused.stdout.split('\n').slice(0, 2)).toEqual([
      expect.stringContaining(
        ': stalled on spec.dependsOn (CrossNamespaceRefRefused), nothing is applied now; once it is: 1 to create,',
      ),
      expect.stringContaining(
        'would stall on spec.dependsOn: CrossNamespaceRefRefused: spec.dependsOn names ApplySet elsewhere/db of another namespace',
      ),
    ]);
    const allowed = await preview('far', '--allow-cross-namespace-refs');
    expect(allowed.stdout.split('\n')[1]).toBe('would wait for dependency ApplySet elsewhere/db: not found');
  });

  it('lists driftMode Warn drift as reported, not corrected, in the words the controller then writes', async () => {
    const git = await servers.start({ files: { 'w.yaml': configMapYaml('w', { v: '1' }) } });
    await create('warn', git, { driftMode: 'Warn' });
    const sha = await git.revParse('main');
    await waitForAppliedCommit(c, namespace, 'warn', sha, 60_000);
    // A third party changes the object, as someone with kubectl would.
    await kubectl([
      '-n',
      namespace,
      'patch',
      'configmap',
      'w',
      '--type',
      'merge',
      '-p',
      '{"data":{"v":"theirs"}}',
    ]);

    const run = await preview('warn');
    // Drift only reported changes nothing: exit 0.
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    const [header, ...rest] = run.stdout.trimEnd().split('\n');
    expect(header).toBe(
      `applyset/warn ${n} at main@sha1:${sha}, as ${user}: 0 to create, 0 to configure, 0 to prune, 1 drifted (reported only), 0 unchanged`,
    );
    expect(rest.slice(0, 2)).toEqual([
      `? configmap/w ${n} (drifted: reported, not corrected, driftMode Warn)`,
      '    changed: data.v',
    ]);
    const reported = /^would report DriftDetected, correcting nothing: (.*)$/.exec(rest[2] ?? '')?.[1];
    expect(reported).toBe(
      `1 object(s) changed on the cluster, not corrected (driftMode Warn): ${namespace}::ConfigMap:w: data.v`,
    );

    // The controller's next run reports exactly that, and leaves the object as the third party left it.
    await patchApplySet(namespace, 'warn', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'preview-drift' } },
    });
    const view = await waitFor(
      'Drifted=True',
      async () => {
        const got = await getApplySet(c, namespace, 'warn');
        return condition(got, 'Drifted')?.status === 'True' ? got : undefined;
      },
      60_000,
    );
    expect(condition(view, 'Drifted')).toMatchObject({ reason: 'DriftDetected', message: reported });
    expect((view.status as Record<string, unknown>)['drift']).toEqual({
      items: [{ object: `${namespace}::ConfigMap:w`, message: 'changed: data.v' }],
      totalCount: 1,
      truncated: false,
    });
    expect(await configMapData(c, namespace, 'w')).toEqual({ v: 'theirs' });
  });
});
