import { getCommand } from '../../src/cli/get-command.js';
import { reconcileCommand, resumeCommand, suspendCommand } from '../../src/cli/reconcile-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  waitForAppliedCommit,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';

// Issue #15 point 4: the controller's objects from the command line, kubectl-plugin style, against
// the controller running as its own process: get, reconcile (waits for the outcome), suspend, resume.

describe('applyset get, reconcile, suspend and resume', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-cli');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'cm.yaml': configMapYaml('web', { v: '1' }),
    }));
    await createApplySet(c, namespace, 'site', { url: git.url, interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);
  });

  afterAll(() => stopControllersAndGit(git));

  it('get lists the ApplySet with its revision, suspension and Ready message', async () => {
    const sha = await git.revParse('main');
    const run = await runCli(getCommand, ['-n', namespace]);
    expect(run.code).toBe(ExitCode.ok);
    const [header, row] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+REVISION\s+SUSPENDED\s+READY\s+MESSAGE$/);
    expect(row).toMatch(new RegExp(`^site\\s+main@sha1:${sha}\\s+False\\s+True\\s+Applied revision`));
    const all = await runCli(getCommand, ['-A']);
    expect(all.stdout).toMatch(new RegExp(`^NAMESPACE\\s+NAME`));
    expect(all.stdout).toMatch(new RegExp(`\\n${namespace}\\s+site\\s+`));
    expect((await runCli(getCommand, ['nothing-here', '-n', namespace])).code).toBe(ExitCode.partialFailure);
  });

  it('reconcile applies a new commit now, although the interval is an hour, and reports it', async () => {
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('web', { v: '2' }) });
    const run = await runCli(reconcileCommand, [
      'site',
      '-n',
      namespace,
      '--with-source',
      '--timeout',
      '60s',
    ]);
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).toBe(`applyset/site reconciled: Applied revision: main@sha1:${sha}\n`);
    expect(await configMapData(c, namespace, 'web')).toEqual({ v: '2' });
  });

  it('suspend stops it, reconcile refuses a suspended set, resume applies what came meanwhile', async () => {
    expect(await runCli(suspendCommand, ['site', '-n', namespace])).toMatchObject({
      code: ExitCode.ok,
      stdout: 'applyset/site suspended\n',
    });
    const view = (await getApplySet(c, namespace, 'site')) as unknown as { spec: { suspend?: boolean } };
    expect(view.spec.suspend).toBe(true);
    expect((await runCli(getCommand, ['site', '-n', namespace])).stdout).toMatch(/\nsite\s+\S+\s+True\s+/);
    const sha = await git.writeFiles({ 'cm.yaml': configMapYaml('web', { v: '3' }) });
    const refused = await runCli(reconcileCommand, ['site', '-n', namespace]);
    expect(refused.code).toBe(ExitCode.partialFailure);
    expect(refused.stderr).toContain('is suspended; resume it first');
    expect(await configMapData(c, namespace, 'web')).toEqual({ v: '2' });

    const resumed = await runCli(resumeCommand, ['site', '-n', namespace, '--timeout', '60s']);
    expect(resumed.code).toBe(ExitCode.ok);
    expect(resumed.stdout).toBe(
      `applyset/site resumed\napplyset/site reconciled: Applied revision: main@sha1:${sha}\n`,
    );
    expect(await configMapData(c, namespace, 'web')).toEqual({ v: '3' });
  });

  it('refuses a missing name, an unknown ApplySet and a bad timeout', async () => {
    expect((await runCli(reconcileCommand, ['-n', namespace])).code).toBe(ExitCode.badInput);
    expect((await runCli(reconcileCommand, ['a', 'b', '-n', namespace])).code).toBe(ExitCode.badInput);
    expect((await runCli(reconcileCommand, ['site', '--timeout', 'soon', '-n', namespace])).code).toBe(
      ExitCode.badInput,
    );
    const missing = await runCli(suspendCommand, ['nope', '-n', namespace]);
    expect(missing.code).toBe(ExitCode.partialFailure);
    expect(missing.stderr).toContain('applyset "nope" not found');
  });
});
