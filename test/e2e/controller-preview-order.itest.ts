import * as k8s from '@kubernetes/client-node';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import { cluster, configMapYaml } from './e2e-kit.js';
import { GitServerPool } from './git-server-pool.js';
import { jobYaml, readJob } from './job-status.js';

// Issue #38: the preview of a set with sync waves and hooks lists its objects by wave, in the order the
// controller applies them, and names the hooks the run would run, with their phase, weight and delete
// policy, running none of them. The server judges every object, as for any preview.

const withAnnotations = (yaml: string, annotations: Record<string, string>) =>
  yaml.replace('metadata:\n', `metadata:\n  annotations: ${JSON.stringify(annotations)}\n`);

describe('applyset diff --applyset-object of a set with sync waves and hooks', () => {
  const c = cluster();
  const batch = c.kc.makeApiClient(k8s.BatchV1Api);
  const namespace = uniqueName('e2e-preview-order');
  const servers = new GitServerPool();
  const user = `system:serviceaccount:${namespace}:applyset-deployer`;
  const n = `-n ${namespace}`;

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('lists the objects under a header per wave and the hooks it would run, and runs none', async () => {
    const git = await servers.start({
      files: {
        'migrate.yaml': jobYaml('migrate', { 'argocd.argoproj.io/sync-wave': '-1' }),
        'app.yaml': configMapYaml('app', { v: '1' }),
        'smoke.yaml': withAnnotations(configMapYaml('smoke', { v: '1' }), { 'applyset.dev/wave': '1' }),
        'seed.yaml': jobYaml('seed', {
          'helm.sh/hook': 'pre-install',
          'helm.sh/hook-weight': '-3',
          'helm.sh/hook-delete-policy': 'hook-succeeded',
        }),
      },
    });
    // Suspended: the controller applies nothing (and runs no hook) while the preview looks.
    await createApplySetWithSpec(
      c,
      namespace,
      'ordered',
      { url: git.url, interval: '1h' },
      { suspend: true },
    );
    const sha = await git.revParse('main');

    const run = await runCli(diffCommand, [
      '--applyset-object',
      'ordered',
      '-n',
      namespace,
      '--allowed-source-hosts',
      '127.0.0.1',
    ]);
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout).toBe(
      [
        `applyset/ordered ${n} at main@sha1:${sha}, as ${user}: suspended (spec.suspend), nothing is applied now; once it is: 3 to create, 0 to configure, 0 to prune, 0 unchanged`,
        `suspended (spec.suspend): the controller applies nothing until it is resumed (applyset resume ordered ${n}); below is what its run would then do`,
        'sync wave -1 (1 object):',
        `  + job.batch/migrate ${n} (new)`,
        'sync wave 0 (1 object, applied once sync wave -1 is healthy):',
        `  + configmap/app ${n} (new)`,
        'sync wave 1 (1 object, applied once sync wave 0 is healthy):',
        `  + configmap/smoke ${n} (new)`,
        'hooks the run would run (the preview runs none):',
        `  PreSync hook job.batch/seed ${n}, weight -3, deleted on HookSucceeded`,
        '',
      ].join('\n'),
    );
    // Nothing was run nor written.
    expect(await readJob(batch, namespace, 'seed')).toBeUndefined();
    expect(await readJob(batch, namespace, 'migrate')).toBeUndefined();
  });
});
