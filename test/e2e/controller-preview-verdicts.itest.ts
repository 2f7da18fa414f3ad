import { execFile } from 'node:child_process';
import { sourceAdapters } from '../../src/source/source-adapters.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { ApplySet } from '../../src/api/applyset-types.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { createGitSource } from '../../src/git/git-source.js';
import { parseSourceHostList } from '../../src/net/host-list.js';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeConnection } from '../../src/kube/kube-connection.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { uiPreviewOf } from '../../src/ui/ui-preview.js';
import { runCli } from '../cli/cli-test-kit.js';
import type { FileTree, GitTestServer } from '../harness/git-server.js';
import { STAMP_ANNOTATION, startStampingAdmissionWebhook } from '../harness/stamping-admission-webhook.js';
import { adminKubeConfig, adminKubeconfigPath, uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  condition,
  GROUP,
  PLURAL,
  VERSION,
  configMapYaml,
  createApplySet,
  getApplySet,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
} from './e2e-kit.js';

// Issue #34, a preview says what the server would do (items 3 to 5): `applyset diff --applyset-object`
// sends the reconcile's own create or PATCH with dryRun=All as the ApplySet's account, so the server's
// refusals (a 422, a ValidatingAdmissionPolicy) and a mutating webhook's changes show, with the verdict
// of the real `kubectl diff` on the same change; a Secret's stringData change names its key; and a
// preview that could not be computed says so, with no counts, in text, Markdown and the web view.

const serviceYaml = (protocol: string): string =>
  [
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: web',
    'spec:',
    '  selector:',
    '    app: web',
    '  ports:',
    '    - name: http',
    '      port: 80',
    `      protocol: ${protocol}`,
    '',
  ].join('\n');

const secretYaml = (password: string): string =>
  [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    '  name: creds',
    'type: Opaque',
    'stringData:',
    '  user: admin',
    `  password: ${password}`,
    '',
  ].join('\n');

const commit1: FileTree = {
  'app/web.yaml': serviceYaml('TCP'),
  'app/a.yaml': configMapYaml('a', { v: '1' }),
  'app/creds.yaml': secretYaml('hunter2-old'),
};

/** `text` as a regular expression matching it literally. */
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface ProcessRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real `kubectl diff -f FILE` as the ApplySet's account; never throws, as its exit code is the verdict. */
function kubectlDiff(file: string, namespace: string): Promise<ProcessRun> {
  const as = `system:serviceaccount:${namespace}:applyset-deployer`;
  const args = ['--kubeconfig', adminKubeconfigPath(), 'diff', '-n', namespace, '--as', as, '-f', file];
  return new Promise((resolve) => {
    execFile('kubectl', args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('applyset diff --applyset-object asks the API server, and says when it could not preview', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-preview-verdict');
  let git: GitTestServer;
  let checkout: string;

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
  const user = () => `system:serviceaccount:${namespace}:applyset-deployer`;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, commit1));
    checkout = join(await mkdtemp(join(tmpdir(), 'applyset-preview-verdict-')), 'checkout');
    await createApplySet(c, namespace, 'site', { url: git.url, path: 'app', interval: '1h' });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    if (checkout !== undefined) await rm(dirname(checkout), { recursive: true, force: true });
  });

  it('refuses a Service port protocol the server refuses, as kubectl diff and then the reconcile do', async () => {
    const files = { ...commit1, 'app/web.yaml': serviceYaml('TCPX') };
    const dir = await writeCheckout(files);
    const run = await preview('--local', dir);
    expect(run).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(run.stdout).toContain(`! service/web -n ${namespace}: `);
    expect(run.stdout).toContain('Unsupported value: "TCPX"');
    expect(run.stdout).not.toContain(`~ service/web`);

    // The real kubectl diff of the same change: refused by the server alike (exit above 1).
    const kubectl = await kubectlDiff(join(dir, 'app/web.yaml'), namespace);
    expect(kubectl.code).toBeGreaterThan(1);
    expect(kubectl.stderr).toContain('Unsupported value: "TCPX"');

    // The commit pushed: the controller's reconcile is refused with the same 422.
    const sha = await git.commitTree(files);
    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'verdict-tcpx' } },
    });
    const refusal = await waitFor(
      'the reconcile of the TCPX commit to fail',
      async () => {
        const view = await getApplySet(c, namespace, 'site');
        const ready = condition(view, 'Ready');
        if (ready?.status !== 'False' || view?.status?.lastAttemptedRevision !== `main@sha1:${sha}`)
          return undefined;
        const errors = view.status.errors?.items.map((item) => `${item.object}: ${item.message}`) ?? [];
        return [ready.message, ...errors].join('\n');
      },
      60_000,
    );
    expect(refusal).toContain('Unsupported value: "TCPX"');
  });

  it("shows a ValidatingAdmissionPolicy's refusal of a change and of a new object, as kubectl diff does", async () => {
    const admission = adminKubeConfig().makeApiClient(k8s.AdmissionregistrationV1Api);
    const name = `no-forbidden-${namespace}`;
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['configmaps'],
              },
            ],
          },
          validations: [
            {
              expression: "!has(object.data) || !('v' in object.data) || object.data.v != 'forbidden'",
              message: 'data.v may not be "forbidden"',
            },
          ],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name },
        spec: {
          policyName: name,
          validationActions: ['Deny'],
          matchResources: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          },
        },
      },
    });
    try {
      // The API server takes a new policy up a moment later.
      await waitFor('the API server to enforce the policy', async () => {
        try {
          await c.core.createNamespacedConfigMap({
            namespace,
            body: { metadata: { name: 'vap-probe' }, data: { v: 'forbidden' } },
            dryRun: 'All',
          });
          return undefined;
        } catch {
          return true;
        }
      });
      const dir = await writeCheckout({
        ...commit1,
        'app/a.yaml': configMapYaml('a', { v: 'forbidden' }),
        'app/fresh.yaml': configMapYaml('fresh', { v: 'forbidden' }),
      });
      const run = await preview('--local', dir);
      expect(run).toMatchObject({ code: ExitCode.failure, stderr: '' });
      for (const object of ['a', 'fresh']) {
        expect(run.stdout).toMatch(
          new RegExp(`^! configmap/${object} -n ${namespace}: .*data\\.v may not be "forbidden"`, 'm'),
        );
      }
      expect(run.stdout).not.toContain('(new)');
      expect(run.stdout).not.toContain('~ configmap/a');

      const kubectl = await kubectlDiff(join(dir, 'app/a.yaml'), namespace);
      expect(kubectl.code).toBeGreaterThan(1);
      expect(kubectl.stderr).toContain('data.v may not be "forbidden"');
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name });
      await admission.deleteValidatingAdmissionPolicy({ name });
    }
  });

  it('shows which key of a Secret’s stringData changed, its value masked', async () => {
    const run = await preview(
      '--local',
      await writeCheckout({ ...commit1, 'app/creds.yaml': secretYaml('hunter2-new') }),
    );
    expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
    expect(run.stdout).toContain(
      `~ secret/creds -n ${namespace}\n    data.password: "*** (before)" → "*** (after)"\n`,
    );
    expect(run.stdout).not.toContain('data.user');
    expect(run.stdout).not.toContain('stringData');
    for (const secret of ['hunter2', Buffer.from('hunter2-new').toString('base64')]) {
      expect(run.stdout).not.toContain(secret);
    }
  });

  it('says a preview without kustomize could not be computed, with no counts, in text and Markdown', async () => {
    const dir = await writeCheckout({ ...commit1, 'app/kustomization.yaml': 'resources: [a.yaml]\n' });
    const missing = ['--local', dir, '--kustomize-binary', '/nonexistent/kustomize'];
    const text = await preview(...missing);
    expect(text).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(text.stdout).toMatch(
      new RegExp(
        `^applyset/site -n ${namespace} at local directory ${escaped(dir)}, as ${user()}: could not be previewed: \\w+: `,
      ),
    );
    expect(text.stdout).toContain(
      'kustomize is not installed: no executable "/nonexistent/kustomize" (--kustomize-binary or APPLYSET_KUSTOMIZE_BINARY)',
    );
    const markdown = await preview(...missing, '-o', 'markdown');
    expect(markdown).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(markdown.stdout).toContain('> [!CAUTION]\n> **Could not be previewed**');
    expect(markdown.stdout).toContain('kustomize is not installed');
    for (const said of [text.stdout, markdown.stdout]) {
      expect(said).not.toMatch(/to create|unchanged|Nothing would change/);
    }
  });

  it('says a preview of a source host not allowed could not be computed, in text, Markdown and the web view', async () => {
    const text = await preview();
    expect(text).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(text.stdout).toMatch(
      new RegExp(
        `^applyset/site -n ${namespace} at main, as ${user()}: could not be previewed: \\w+: .*127\\.0\\.0\\.1`,
      ),
    );
    const markdown = await preview('-o', 'markdown');
    expect(markdown).toMatchObject({ code: ExitCode.failure, stderr: '' });
    expect(markdown.stdout).toContain('**Could not be previewed**');

    // The web view's next-run block, computed by the same preview with no host allowed.
    const connection = createKubeConnection({ credentials: createKubeCredentials(adminKubeConfig()) });
    const client = createKubeClient({ connection });
    const gitCache = await mkdtemp(join(tmpdir(), 'preview-verdict-git-'));
    try {
      const gitSource = createGitSource({ cacheDir: gitCache, allowedHosts: parseSourceHostList('') });
      const clientAs = (as: string) => createKubeClient({ connection, impersonateUser: as });
      const applySet = (await c.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        name: 'site',
      })) as ApplySet;
      const block = await uiPreviewOf({ client, clientAs, sources: sourceAdapters({ gitSource }) })(
        applySet,
        AbortSignal.timeout(60_000),
      );
      expect(block.kind).toBe('unavailable');
      const said = block.kind === 'unavailable' ? block.reason : `${block.summary}\n${block.diff}`;
      expect(said).toContain('could not be previewed');
      for (const output of [text.stdout, markdown.stdout, said]) {
        expect(output).not.toMatch(/to create|unchanged|Nothing would change/);
      }
    } finally {
      await rm(gitCache, { recursive: true, force: true });
    }
  });

  it("shows a mutating webhook's change, as kubectl diff does", async () => {
    const webhook = await startStampingAdmissionWebhook(namespace);
    try {
      const dir = await writeCheckout({ ...commit1, 'app/a.yaml': configMapYaml('a', { v: '2' }) });
      const run = await preview('--local', dir);
      expect(run).toMatchObject({ code: ExitCode.partialFailure, stderr: '' });
      expect(run.stdout).toContain(
        `~ configmap/a -n ${namespace}\n    data.v: "1" → "2"\n    metadata.annotations.${STAMP_ANNOTATION}: (absent) → "2"\n`,
      );
      const kubectl = await kubectlDiff(join(dir, 'app/a.yaml'), namespace);
      expect(kubectl.code).toBe(1);
      expect(kubectl.stdout).toContain(`+    ${STAMP_ANNOTATION}: "2"`);
    } finally {
      await webhook.close();
    }
  });
});
