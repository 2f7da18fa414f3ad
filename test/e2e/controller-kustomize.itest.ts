import type { GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #26: an ApplySet whose path holds a kustomization applies what kustomize builds of it, and prunes
// what leaves the build; a remote base or a plugin is refused with a clear reason, touching nothing.

const overlay = 'resources: [../../base]\nnamePrefix: prod-\n';
const base = (resources: string, mode: string) =>
  `resources: [${resources}]\nconfigMapGenerator:\n- name: app\n  literals: [MODE=${mode}]\n`;

describe('an ApplySet on a Kustomize overlay', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-kustomize');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(
      c,
      namespace,
      {
        'base/kustomization.yaml': base('a.yaml, b.yaml', 'one'),
        'base/a.yaml': configMapYaml('a', { v: '1' }),
        'base/b.yaml': configMapYaml('b', { v: '1' }),
        'overlays/prod/kustomization.yaml': overlay,
      },
      // Issue #34, item 10: the controller takes APPLYSET_KUSTOMIZE_BINARY as every command does (the
      // flag: controller-preview-kustomize.itest.ts). No PATH, so that nothing else could be found.
      { env: { APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary(), PATH: '/nonexistent' } },
    ));
  });

  afterAll(() => stopControllersAndGit(git));

  /** The names of the ConfigMaps of the test's namespace that the overlay makes (`prod-`). */
  const builtConfigMaps = async () =>
    (await c.core.listNamespacedConfigMap({ namespace })).items
      .map((item) => item.metadata?.name ?? '')
      .filter((name) => name.startsWith('prod-'))
      .sort();

  /** Waits for the ApplySet's Ready=False with `reason`, after `sha` was tried. */
  const waitForRefusal = (sha: string, reason: string) =>
    waitForReady(
      c,
      namespace,
      'prod',
      'False',
      (view) =>
        view.status?.lastAttemptedRevision === `main@sha1:${sha}` &&
        condition(view, 'Ready')?.reason === reason,
      60_000,
    );

  /** Waits for a Warning event with `reason` on the ApplySet whose message holds `text`. */
  const warning = (reason: string, text: string) =>
    waitFor(
      `a Warning ${reason} event saying ${text}`,
      async () => {
        const events = await c.core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.name=prod',
        });
        return events.items.find(
          (event) =>
            event.type === 'Warning' && event.reason === reason && event.message?.includes(text) === true,
        );
      },
      30_000,
    );

  it('applies the build, prunes what a commit drops, and rolls a generator by its hash', async () => {
    await createApplySet(c, namespace, 'prod', { url: git.url, path: 'overlays/prod', interval: '3s' });
    await waitForAppliedCommit(c, namespace, 'prod', await git.revParse('main'), 60_000);
    const first = await builtConfigMaps();
    expect(first).toEqual(['prod-a', expect.stringMatching(/^prod-app-[a-z0-9]{10}$/), 'prod-b']);
    const firstGenerated = first[1] ?? '';
    expect(await configMapData(c, namespace, firstGenerated)).toEqual({ MODE: 'one' });

    const dropped = await git.writeFiles({ 'base/kustomization.yaml': base('a.yaml', 'one') });
    await waitForAppliedCommit(c, namespace, 'prod', dropped, 60_000);
    expect(await builtConfigMaps()).toEqual(['prod-a', firstGenerated]);

    const rolled = await git.writeFiles({ 'base/kustomization.yaml': base('a.yaml', 'two') });
    await waitForAppliedCommit(c, namespace, 'prod', rolled, 60_000);
    const after = await builtConfigMaps();
    expect(after).toEqual(['prod-a', expect.stringMatching(/^prod-app-[a-z0-9]{10}$/)]);
    expect(after[1]).not.toBe(firstGenerated);
    expect(await configMapData(c, namespace, after[1] ?? '')).toEqual({ MODE: 'two' });
  });

  it.each([
    [
      'a remote base',
      `${overlay}resources: [../../base, 'https://github.com/example/platform//base?ref=v1']\n`.replace(
        'resources: [../../base]\n',
        '',
      ),
      'overlays/prod/kustomization.yaml: resources entry "https://github.com/example/platform//base?ref=v1" is remote',
    ],
    [
      'a generator plugin',
      `${overlay}generators: [secrets-generator.yaml]\n`,
      'overlays/prod/kustomization.yaml: generators entry "secrets-generator.yaml" is a plugin configuration',
    ],
  ])(
    'refuses %s with a clear reason in status and event, and changes nothing applied',
    async (_what, text, why) => {
      const before = await builtConfigMaps();
      const applied = await c.core.readNamespacedConfigMap({ namespace, name: 'prod-a' });
      const sha = await git.writeFiles({
        'overlays/prod/kustomization.yaml': text,
        'overlays/prod/secrets-generator.yaml': 'apiVersion: example.com/v1\nkind: SecretsFromVault\n',
      });
      const stalled = await waitForRefusal(sha, 'KustomizationRefused');
      expect(condition(stalled, 'Ready')?.message).toContain(
        'kustomize build overlays/prod was refused before it ran',
      );
      expect(condition(stalled, 'Ready')?.message).toContain(why);
      expect(condition(stalled, 'Stalled')?.status).toBe('True');
      await warning('KustomizationRefused', why);
      expect(await builtConfigMaps()).toEqual(before);
      const still = await c.core.readNamespacedConfigMap({ namespace, name: 'prod-a' });
      expect(still.metadata?.resourceVersion).toBe(applied.metadata?.resourceVersion);
      // Back to the overlay that builds, for the next case.
      const fixed = await git.writeFiles({ 'overlays/prod/kustomization.yaml': overlay });
      await waitForAppliedCommit(c, namespace, 'prod', fixed, 60_000);
    },
  );
});
