import { setTimeout as delay } from 'node:timers/promises';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type SopsTool } from '../harness/sops-tool.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  httpGet,
  installCrd,
  kubectl,
  kubectlApply,
  repoRoot,
  stopAllControllers,
  waitFor,
  waitForReady,
  type ApplySetOptions,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #33, finding 2 (the pattern door): a tenant, with its own age key, pushes a sops file whose
// encrypted_regex is `^(a+)+$` and which holds a key of forty `a`s and a `-`. Run by a backtracking
// engine, that pattern takes 2^40 steps on that key, before the MAC is checked, and froze the
// controller's event loop: /healthz went unanswered and liveness restarted the pod in a loop. sops
// (Go's RE2) encrypts the file in linear time, and so must the controller read it. The controller
// runs with the chart's RBAC and watches both tenants.

const EVIL_KEY = `${'a'.repeat(40)}-`;
/** How long /healthz may take to answer at any moment; liveness allows a few seconds. */
const HEALTHZ_DEADLINE_MS = 10_000;

describe('the pattern door: a sops encrypted_regex that backtracks', () => {
  const c = cluster();
  const shard = uniqueName('pat');
  const tenant = uniqueName('e2e-pattern');
  const other = uniqueName('e2e-pattern-other');
  let sops: SopsTool;
  let git: GitTestServer;
  let lockedDown: LockedDownController | undefined;

  /** Applies the ApplySet labelled for this suite's controller, until the server kept its decryption. */
  const createLabelledApplySet = async (namespace: string, name: string, options: ApplySetOptions) => {
    const body = applySetBody(namespace, name, options) as { metadata: Record<string, unknown> };
    body.metadata['labels'] = { 'applyset.dev/e2e-shard': shard };
    await waitFor(`ApplySet ${namespace}/${name} created as asked`, async () => {
      await kubectl(['apply', '-f', `${repoRoot}/crds`]);
      await kubectlApply(JSON.stringify(body));
      const view = (await getApplySet(c, namespace, name)) as { spec?: { decryption?: unknown } } | undefined;
      return options.decryptionSecret !== undefined && view?.spec?.decryption === undefined
        ? undefined
        : true;
    });
  };

  beforeAll(async () => {
    sops = await startSopsTool();
    const key = await sops.ageKey();
    await installCrd();
    for (const namespace of [tenant, other]) {
      await c.core.createNamespace({ body: { metadata: { name: namespace } } });
      await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [coreRule('configmaps', 'secrets')]);
    }
    // The real sops encrypts it: `aaa` matches the rule and is encrypted, the long key does not.
    const evil = await sops.encrypt(
      'evil.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\ndata:\n  aaa: hidden\n  ${EVIL_KEY}: clear\n`,
      [key.recipient],
      { flags: ['--encrypted-regex', '^(a+)+$'] },
    );
    expect(evil).toContain('encrypted_regex: ^(a+)+$');
    expect(evil).toContain(`${EVIL_KEY}: clear`);
    expect(evil).not.toContain('aaa: hidden');
    git = await startGitServer({
      files: { 'evil/evil.yaml': evil, 'plain/cm.yaml': configMapYaml('plain', { k: 'v' }) },
    });
    await c.core.createNamespacedSecret({
      namespace: tenant,
      body: { metadata: { name: 'own-age' }, stringData: { 'identity.agekey': `${key.identity}\n` } },
    });
    lockedDown = await startLockedDownController({
      namespace: undefined,
      values: { watchLabelSelector: `applyset.dev/e2e-shard in (${shard})` },
    });
  }, SOPS_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    await lockedDown?.cleanup();
    await sops?.cleanup();
  });

  it('keeps /healthz answering, reads the file as sops would, and the other tenant becomes Ready meanwhile', async () => {
    const controller = (lockedDown as LockedDownController).process;
    let done = false;
    let slowest = 0;
    const watchHealthz = (async () => {
      while (!done) {
        const started = Date.now();
        const status = await Promise.race([
          httpGet(controller.port, '/healthz').then((response) => response.status),
          delay(HEALTHZ_DEADLINE_MS).then(() => undefined),
        ]);
        if (status === undefined) {
          throw new Error(`/healthz went unanswered for ${HEALTHZ_DEADLINE_MS} ms during the reconcile`);
        }
        expect(status).toBe(200);
        slowest = Math.max(slowest, Date.now() - started);
        await delay(250);
      }
    })();
    const watched = watchHealthz.then(
      () => undefined,
      (error: unknown) => error,
    );

    try {
      await createLabelledApplySet(tenant, 'evil', {
        url: git.url,
        path: 'evil',
        decryptionSecret: 'own-age',
      });
      await createLabelledApplySet(other, 'plain', { url: git.url, path: 'plain' });

      const failedHealthz = Promise.race([watched, delay(60_000 + HEALTHZ_DEADLINE_MS)]).then((error) => {
        if (error !== undefined) throw error;
      });
      // A frozen event loop answers neither /healthz nor reconciles: whichever notices first fails.
      const results = Promise.all([
        waitForReady(c, other, 'plain', 'True', () => true, 60_000),
        waitForReady(c, tenant, 'evil', 'True', () => true, 60_000),
      ]);
      results.catch(() => undefined);
      await Promise.race([results, failedHealthz.then(() => results)]);
      const [, evilView] = await results;
      expect(condition(evilView, 'Ready')?.reason).not.toBe('DecryptionFailed');
      // Decrypted as sops reads the rule: `aaa` was encrypted and comes back, the long key was clear.
      expect(await configMapData(c, tenant, 'evil')).toEqual({ aaa: 'hidden', [EVIL_KEY]: 'clear' });
      expect(await configMapData(c, other, 'plain')).toEqual({ k: 'v' });
    } finally {
      done = true;
    }
    const error = await watched;
    if (error !== undefined) throw error;
    expect(slowest).toBeLessThan(HEALTHZ_DEADLINE_MS);
  }, 150_000);
});
