import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { diffCommand } from '../../src/cli/diff-command.js';
import { getCommand } from '../../src/cli/get-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from '../cli/cli-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import type { FileTree, GitTestServer } from '../harness/git-server.js';
import { kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';

// Issue #26, preview a branch: `applyset diff --applyset-object` on a changed checkout of a
// controller-managed ApplySet prints what the next reconcile then does, object for object.

const secretYaml = (password: string): string =>
  [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    '  name: creds',
    'type: Opaque',
    'data:',
    `  password: ${Buffer.from(password).toString('base64')}`,
    '',
  ].join('\n');

/** A ConfigMap the engine applies server-side, as its annotation asks. */
const serverSideYaml = (v: string): string =>
  [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: ss',
    '  annotations:',
    '    applyset.dev/apply-strategy: server-side',
    'data:',
    `  v: "${v}"`,
    '',
  ].join('\n');

const commit1: FileTree = {
  'app/ss.yaml': serverSideYaml('1'),
  'app/a.yaml': configMapYaml('a', { v: '1' }),
  'app/b.yaml': configMapYaml('b', { v: '1' }),
  'app/keep.yaml': configMapYaml('keep', { v: '1' }),
  'app/creds.yaml': secretYaml('hunter2-old'),
  // Outside spec.source.path, and left out by spec.source.ignore: never read, in Git or in a checkout.
  'other/x.yaml': configMapYaml('x', { v: '1' }),
  'app/skip.yaml': configMapYaml('skip', { v: '1' }),
};

/** One changed, one added, one removed, the Secret changed. */
const commit2: FileTree = {
  'app/ss.yaml': serverSideYaml('2'),
  'app/a.yaml': configMapYaml('a', { v: '2' }),
  'app/c.yaml': configMapYaml('c', { v: '1' }),
  'app/keep.yaml': configMapYaml('keep', { v: '1' }),
  'app/creds.yaml': secretYaml('hunter2-new'),
  'other/x.yaml': configMapYaml('x', { v: '1' }),
  'app/skip.yaml': configMapYaml('skip', { v: '2' }),
};

/** What the text output and the event both say: the objects by what would happen or happened. */
interface Changes {
  readonly created: string[];
  readonly configured: string[];
  readonly pruned: string[];
}

/** The objects of `applyset diff` text output, by verb. */
function previewedChanges(stdout: string): Changes {
  const pick = (pattern: RegExp) =>
    stdout
      .split('\n')
      .map((line) => pattern.exec(line)?.[1])
      .filter((name): name is string => name !== undefined)
      .sort();
  return {
    created: pick(/^\+ (.+) \(new\)$/),
    configured: pick(/^~ (\S+(?: -n \S+)?)(?: \(.*\))?$/),
    pruned: pick(/^- (.+) \(pruned\)$/),
  };
}

/** The objects an event names (`; created a, b; configured c; pruned d`), by verb. */
function reconciledChanges(message: string): Changes {
  const of = (verb: string) =>
    (new RegExp(`; ${verb} ([^;]+)`).exec(message)?.[1] ?? '')
      .split(', ')
      .filter((name) => name !== '')
      .sort();
  return { created: of('created'), configured: of('configured'), pruned: of('pruned') };
}

describe('applyset diff --applyset-object (preview of a branch)', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-preview');
  let git: GitTestServer;
  let checkout: string;

  /** A checkout of the repository holding `files` (written over whatever it held). */
  const writeCheckout = async (files: FileTree): Promise<string> => {
    await rm(checkout, { recursive: true, force: true });
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(checkout, path)), { recursive: true });
      await writeFile(join(checkout, path), text);
    }
    return checkout;
  };
  const preview = (...args: string[]) =>
    runCli(diffCommand, ['--applyset-object', 'site', '-n', namespace, ...args]);

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, commit1));
    checkout = join(await mkdtemp(join(tmpdir(), 'applyset-preview-')), 'checkout');
    await createApplySet(c, namespace, 'site', { url: git.url, path: 'app', interval: '1h', suspend: true });
    await patchApplySet(namespace, 'site', {
      spec: { suspend: false, source: { ignore: '/app/skip.yaml' } },
    });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    if (checkout !== undefined) await rm(dirname(checkout), { recursive: true, force: true });
  });

  it('previews a changed checkout, and the reconcile of that commit then does exactly that', async () => {
    const run = await preview('--local', await writeCheckout(commit2));
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    const n = `-n ${namespace}`;
    expect(run.stdout.split('\n')[0]).toBe(
      `applyset/site ${n} at local directory ${checkout}, as system:serviceaccount:${namespace}:applyset-deployer: 1 to create, 3 to configure, 1 to prune, 1 unchanged`,
    );
    expect(run.stdout).toContain(`+ configmap/c ${n} (new)\n`);
    expect(run.stdout).toContain(`~ configmap/a ${n}\n    data.v: "1" → "2"\n`);
    expect(run.stdout).toContain(`- configmap/b ${n} (pruned)\n`);
    expect(run.stdout).toContain(
      `~ configmap/ss ${n} (applied server-side: applyset.dev/apply-strategy: server-side)\n    data.v: "1" → "2"\n`,
    );
    expect(run.stdout).toContain(`~ secret/creds ${n}\n    data.password: "*** (before)" → "*** (after)"\n`);
    for (const secret of ['hunter2', Buffer.from('hunter2-new').toString('base64')]) {
      expect(run.stdout).not.toContain(secret);
    }
    const previewed = previewedChanges(run.stdout);

    // The same commit pushed: the preview of the ApplySet's own ref says the same, and the
    // controller's reconcile does it.
    const sha = await git.commitTree(commit2);
    const ofRef = await preview('--allowed-source-hosts', '127.0.0.1');
    expect(ofRef).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(ofRef.stdout.split('\n')[0]).toContain(`at main@sha1:${sha}, as `);
    expect(previewedChanges(ofRef.stdout)).toEqual(previewed);

    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'preview-1' } },
    });
    const view = await waitForAppliedCommit(c, namespace, 'site', sha, 60_000);
    expect(view.status?.summary).toMatchObject({ applied: 4, unchanged: 1, pruned: 1 });
    const events = await c.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=site' });
    const event = events.items.find((e) => e.message?.includes(`main@sha1:${sha}`) === true);
    expect(event?.message).toContain(': 1 created, 3 configured, 1 unchanged, 1 pruned');
    expect(reconciledChanges(event?.message ?? '')).toEqual(previewed);
  });

  it('exits 0 when nothing would change, from the ApplySet ref and from a checkout of it', async () => {
    const ofRef = await preview('--allowed-source-hosts', '127.0.0.1');
    expect(ofRef).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(ofRef.stdout).toMatch(/: 0 to create, 0 to configure, 0 to prune, 5 unchanged\n$/);
    const local = await preview('--local', await writeCheckout(commit2));
    expect(local.code).toBe(ExitCode.ok);
  });

  it('previews another branch of the repository with --ref, leaving the ApplySet at its own', async () => {
    await git.setBranch('feature', 'main');
    const sha = await git.writeFiles(
      { 'app/keep.yaml': configMapYaml('keep', { v: 'feature' }) },
      { branch: 'feature' },
    );
    const run = await preview('--ref', 'feature', '--allowed-source-hosts', '127.0.0.1');
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout).toContain(`at feature@sha1:${sha}, as `);
    expect(run.stdout).toContain(`~ configmap/keep -n ${namespace}\n    data.v: "1" → "feature"\n`);
    expect(previewedChanges(run.stdout)).toEqual({
      created: [],
      configured: [`configmap/keep -n ${namespace}`],
      pruned: [],
    });
  });

  it('prints a pull-request comment with -o markdown', async () => {
    const { 'app/c.yaml': _c, ...rest } = commit2;
    const files = {
      ...rest,
      'app/a.yaml': configMapYaml('a', { v: '3' }),
      'app/creds.yaml': secretYaml('x9'),
    };
    const run = await preview('--local', await writeCheckout(files), '-o', 'markdown');
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    const n = `-n ${namespace}`;
    expect(run.stdout).toContain(
      `### applyset diff: ApplySet \`${namespace}/site\` at \`local directory ${checkout}\`\n\n` +
        `**0 to create, 2 to configure, 1 to prune, 2 unchanged**, as \`system:serviceaccount:${namespace}:applyset-deployer\`\n`,
    );
    expect(run.stdout).toContain(`| 🗑️ **prune** | \`configmap/c ${n}\` | left the set: deleted |`);
    expect(run.stdout).toContain(
      `#### \`configmap/a ${n}\`\n\n\`\`\`diff\n- data.v: "2"\n+ data.v: "3"\n\`\`\`\n`,
    );
    expect(run.stdout).toContain(
      `#### \`secret/creds ${n}\`\n\n\`\`\`diff\n- data.password: "*** (before)"\n+ data.password: "*** (after)"\n\`\`\`\n`,
    );
    expect(run.stdout).not.toContain(Buffer.from('x9').toString('base64'));
  });

  it('shows prunes over spec.pruneLimit as held back, and the run as stopped', async () => {
    await patchApplySet(namespace, 'site', { spec: { pruneLimit: '25%' } });
    const { 'app/c.yaml': _c, 'app/keep.yaml': _keep, ...rest } = commit2;
    const run = await preview('--local', await writeCheckout(rest));
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    const n = `-n ${namespace}`;
    for (const name of ['c', 'keep']) {
      expect(run.stdout).toContain(
        `= configmap/${name} ${n} (held back, not pruned: over spec.pruneLimit (2 prunes, limit 1))\n`,
      );
    }
    expect(run.stdout).toContain(
      'the run would stop, nothing written: PruneLimitExceeded: the run would prune 2 objects, over the prune limit of 1',
    );
    await patchApplySet(namespace, 'site', { spec: { pruneLimit: null } });
  });

  it('says it could not preview where the controller would stall: here, on a missing account', async () => {
    const run = await preview('--default-service-account', 'nobody');
    expect(run).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(run.stdout).toBe(
      `applyset/site -n ${namespace} at main, as system:serviceaccount:${namespace}:nobody: could not be previewed: ServiceAccountNotFound: ${run.stdout.split('ServiceAccountNotFound: ')[1]?.trimEnd()}\n`,
    );
    expect(run.stdout).toContain(`${namespace}/nobody`);
  });

  it('stops, saying so, for an ApplySet applied to a remote cluster, rather than preview this one', async () => {
    await patchApplySet(namespace, 'site', { spec: { kubeConfig: { secretRef: { name: 'cluster-b' } } } });
    const run = await preview();
    await patchApplySet(namespace, 'site', { spec: { kubeConfig: null } });
    expect(run).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(run.stdout).toContain(
      `could not be previewed: RemoteClusterNotPreviewed: the ApplySet is applied to the cluster of Secret ${namespace}/cluster-b (spec.kubeConfig)`,
    );
    expect(run.stdout).not.toContain('to create');
  });

  it('refuses, saying so, a user who may not impersonate the ApplySet account', async () => {
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    const reader = 'preview-reader';
    const kubeconfig = await kubeconfigForServiceAccount(namespace, reader);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: reader },
        rules: [{ apiGroups: ['applyset.dev'], resources: ['applysets'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: reader },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: reader },
        subjects: [{ kind: 'ServiceAccount', name: reader, namespace }],
      },
    });
    const env = { KUBECONFIG: kubeconfig, HOME: cliHome() };
    // The API server's RBAC cache takes the new binding a moment later: wait until the reader may get it.
    await waitFor(
      'the reader to be allowed to get the ApplySet',
      async () =>
        (await runCli(getCommand, ['site', '-n', namespace], { env })).code === 0 ? true : undefined,
      30_000,
    );
    const run = await runCli(diffCommand, ['--applyset-object', 'site', '-n', namespace], { env });
    expect(run).toMatchObject({ code: ExitCode.failure, stdout: '' });
    expect(run.stderr).toBe(
      `applyset diff: you may not impersonate ServiceAccount ${namespace}/applyset-deployer, the account the controller applies this ApplySet as, so no preview was computed: one as you would not show what that account may do. Ask for the verb impersonate on serviceaccounts, resourceNames [applyset-deployer], in namespace ${namespace}\n`,
    );
  });
});
