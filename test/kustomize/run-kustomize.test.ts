/**
 * kustomize as the controller runs it (the real binary of scripts/build-kustomize.sh): a build that
 * runs away in time or memory is stopped with a message naming the limit, and kustomize's own error
 * reaches the user without the private directory it ran in.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KustomizeError } from '../../src/kustomize/kustomize-error.js';
import {
  DEFAULT_KUSTOMIZE_OPTIONS,
  runKustomize,
  type KustomizeOptions,
} from '../../src/kustomize/run-kustomize.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';

const configMaps = (count: number) =>
  Array.from(
    { length: count },
    (_, index) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${index}\ndata:\n  k: v${index}\n`,
  ).join('---\n');

describe('runKustomize', () => {
  let work: string;
  let options: KustomizeOptions;

  beforeAll(async () => {
    options = { ...DEFAULT_KUSTOMIZE_OPTIONS, binary: await kustomizeBinary() };
  });
  beforeEach(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'run-kustomize-'));
    await mkdir(path.join(work, 'home'));
  });
  afterEach(() => rm(work, { recursive: true, force: true }));

  const build = async (
    files: Readonly<Record<string, string>>,
    overrides: Partial<KustomizeOptions> = {},
  ) => {
    const repo = path.join(work, 'repo');
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
      await writeFile(path.join(repo, name), text);
    }
    const started = Date.now();
    const result = await runKustomize({
      dir: path.join(repo, 'app'),
      label: 'kustomize build app',
      hide: repo,
      home: path.join(work, 'home'),
      maxOutputBytes: 32 * 1024 * 1024,
      options: { ...options, ...overrides },
    }).catch((error: unknown) => error);
    return { result, elapsedMs: Date.now() - started };
  };

  it('stops a build past its time limit, saying which limit', async () => {
    // 800 objects under a name prefix take kustomize about 2.5 s on 2 idle cores.
    const { result, elapsedMs } = await build(
      {
        'app/kustomization.yaml': 'resources: [many.yaml]\nnamePrefix: p-\n',
        'app/many.yaml': configMaps(800),
      },
      { timeoutMs: 300 },
    );
    expect(result).toBeInstanceOf(KustomizeError);
    expect((result as KustomizeError).message).toBe(
      'kustomize build app was stopped: it ran past its time limit of 0.3 s (--kustomize-timeout)',
    );
    expect((result as KustomizeError).reason).toBe('KustomizeBuildFailed');
    expect(elapsedMs).toBeLessThan(2_000);
  });

  it('stops a build past its memory limit, saying which limit', async () => {
    // A 6 MiB file in a generator: kustomize's resident memory passes 60 MiB building it.
    const { result } = await build(
      {
        'app/kustomization.yaml': 'configMapGenerator:\n- name: big\n  files: [big.txt]\n',
        'app/big.txt': `${'x'.repeat(1000)}\n`.repeat(6000),
      },
      { maxMemoryBytes: 24 * 1024 * 1024 },
    );
    expect(result).toBeInstanceOf(KustomizeError);
    expect((result as KustomizeError).message).toBe(
      'kustomize build app was stopped: it used more than its memory limit of 24 MiB (--kustomize-max-memory)',
    );
  });

  it("builds the same input within its limits, and quotes kustomize's error without the directory it ran in", async () => {
    const { result } = await build({
      'app/kustomization.yaml': 'resources: [many.yaml]\nnamePrefix: p-\n',
      'app/many.yaml': configMaps(3),
    });
    expect(result).toContain('name: p-c2');
    const { result: failed } = await build({ 'app/kustomization.yaml': 'resources: [missing.yaml]\n' });
    expect(failed).toBeInstanceOf(KustomizeError);
    const message = (failed as KustomizeError).message;
    expect(message).toMatch(/^kustomize build app failed: .*missing\.yaml/);
    expect(message).not.toContain(work);
  });

  it('has no network: a remote base that got past the pre-scan is neither downloaded nor cloned', async () => {
    const { result } = await build({
      'app/kustomization.yaml':
        'resources:\n- https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v1.0.6\n',
    });
    expect(result).toBeInstanceOf(KustomizeError);
    const message = (result as KustomizeError).message;
    expect(message).toContain('proxyconnect tcp: dial tcp 127.0.0.1:1: connect: connection refused');
    expect(message).toContain("no 'git' program on path");
  });

  it('says when the binary is missing, as an installation problem to retry', async () => {
    const { result } = await build(
      { 'app/kustomization.yaml': 'resources: []\n' },
      { binary: 'no-such-kustomize' },
    );
    expect(result).toBeInstanceOf(KustomizeError);
    expect((result as KustomizeError).message).toBe(
      'kustomize is not installed: no executable "no-such-kustomize" on PATH (--kustomize-binary or APPLYSET_KUSTOMIZE_BINARY)',
    );
    expect((result as KustomizeError).intent).toBe('retryable');
  });

  // Issue #34, item 10: a user of `kubectl apply -k` has kubectl, not always kustomize.
  describe('with no binary named', () => {
    const savedPath = process.env['PATH'];
    afterEach(() => {
      process.env['PATH'] = savedPath;
    });

    /** PATH as one directory holding only `names`, each a link to the binary of that name on PATH. */
    const onlyOnPath = async (targets: Readonly<Record<string, string>>) => {
      const bin = path.join(work, 'bin');
      await mkdir(bin);
      for (const [name, target] of Object.entries(targets)) await symlink(target, path.join(bin, name));
      process.env['PATH'] = bin;
    };
    const kubectlPath = () => {
      for (const dir of (savedPath ?? '').split(path.delimiter)) {
        const candidate = path.join(dir, 'kubectl');
        if (existsSync(candidate)) return candidate;
      }
      throw new Error('kubectl is not on PATH; the tests compare with it');
    };
    const overlay = {
      'app/kustomization.yaml': 'resources: [cm.yaml]\nnamePrefix: p-\n',
      'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
    };

    it('builds with kubectl kustomize when kustomize is not on PATH and kubectl is', async () => {
      await onlyOnPath({ kubectl: kubectlPath() });
      const { result } = await build(overlay, { binary: undefined });
      expect(result).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-a\n');
    });

    it('builds with kustomize when it is on PATH', async () => {
      await onlyOnPath({ kustomize: options.binary ?? '', kubectl: '/nonexistent/kubectl' });
      const { result } = await build(overlay, { binary: undefined });
      expect(result).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-a\n');
    });

    it('runs a kubectl named as the binary as kubectl kustomize', async () => {
      const { result } = await build(overlay, { binary: kubectlPath() });
      expect(result).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-a\n');
    });

    it('says what to install, or which flag and variable name the binary, when neither is on PATH', async () => {
      await onlyOnPath({});
      const { result } = await build(overlay, { binary: undefined });
      expect(result).toBeInstanceOf(KustomizeError);
      expect((result as KustomizeError).message).toBe(
        'kustomize is not installed: neither "kustomize" nor "kubectl" (for kubectl kustomize) is on PATH; ' +
          'install one, or name the binary with --kustomize-binary or APPLYSET_KUSTOMIZE_BINARY',
      );
    });
  });
});
