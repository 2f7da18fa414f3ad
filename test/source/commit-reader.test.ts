/**
 * A reconcile reads its revision's files in one pass over the commit: the repository's read lock is
 * taken once, whether spec.source.path holds plain manifests or a kustomization. A real Git server and
 * the controller's Git source; the lock itself is counted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import { commitReader } from '../../src/source/git/commit-reader.js';
import { readFiles } from '../../src/source/revision-reader.js';
import { createGitSource, type GitSource } from '../../src/git/git-source.js';
import { KeyedReadWriteLock } from '../../src/git/keyed-read-write-lock.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';

const configMap = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
const files = {
  'plain/a.yaml': configMap('a'),
  'plain/b.yaml': configMap('b'),
  'kustomized/kustomization.yaml': 'resources:\n  - c.yaml\n',
  'kustomized/c.yaml': configMap('c'),
};
const quiet = { error: () => undefined };

describe('reading a revision from the Git cache', () => {
  let server: GitTestServer;
  let cacheDir: string;
  let gitSource: GitSource;
  let commit: string;
  let binary: string;

  beforeAll(async () => {
    binary = await kustomizeBinary();
    server = await startGitServer({ files });
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'commit-reader-test-'));
    gitSource = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    ({ commit } = await gitSource.fetch({ url: server.url, ref: { branch: 'main' } }));
  });

  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const readAt = async (sourcePath: string) => {
    const resolved = resolveApplySetSpec({
      source: { url: server.url, ref: { branch: 'main' }, path: sourcePath },
      prune: true,
    });
    if (!resolved.ok) throw new Error(JSON.stringify(resolved.errors));
    // Every lock of the Git source, counted as it is taken, then taken as it always is.
    const modes: string[] = [];
    const run = KeyedReadWriteLock.prototype.run;
    KeyedReadWriteLock.prototype.run = function <T>(
      this: KeyedReadWriteLock,
      ...args: Parameters<typeof run>
    ) {
      modes.push(args[1]);
      return run.apply(this, args) as Promise<T>;
    };
    try {
      const read = await readFiles(commitReader(gitSource, { url: server.url, commit }), resolved.spec, {
        revision: `main@sha1:${commit}`,
        signal: new AbortController().signal,
        log: quiet,
        kustomize: { ...DEFAULT_KUSTOMIZE_OPTIONS, binary },
      });
      if ('done' in read) throw new Error(JSON.stringify(read.done));
      return { files: read.value, locks: modes };
    } finally {
      KeyedReadWriteLock.prototype.run = run;
    }
  };

  it('reads plain manifests under one read lock', async () => {
    const { files: got, locks } = await readAt('plain');
    expect(got.map((file) => file.path)).toEqual(['plain/a.yaml', 'plain/b.yaml']);
    expect(locks).toEqual(['read']);
  });

  it('builds a kustomization under read locks only: one to find it, one once its build may start', async () => {
    const { files: got, locks } = await readAt('kustomized');
    expect(got).toEqual([{ path: 'kustomize build kustomized', text: expect.stringContaining('name: c') }]);
    // A build waiting for its slot holds no lock another tenant's fetch needs (src/source/git/commit-reader.ts).
    expect(locks).toEqual(['read', 'read']);
  });
});
