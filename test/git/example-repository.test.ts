/**
 * The demo's example repository, served by the Git test server and fetched by the Git source, the way
 * `npm run demo` uses it: every manifest arrives, and removing one file is not read at the next commit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGitSource } from '../../src/git/git-source.js';
import { readFileTree, startGitServer, type GitTestServer } from '../harness/git-server.js';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples');

describe('the example repository', () => {
  let server: GitTestServer | undefined;
  let cacheDir: string;

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'example-repository-test-'));
  });

  afterEach(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('serves examples/ over Git; legacy-config.yaml deleted is not read at the next commit', async () => {
    server = await startGitServer({ files: await readFileTree(examples) });
    const { url } = server;
    const source = createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'] });
    const first = await source.fetch({ url: server.url, ref: { branch: 'main' } });
    const read = async (commit: string) =>
      (await source.readManifests({ url, commit, path: 'guestbook' })).map((file) => file.path);
    expect(await read(first.commit)).toEqual([
      'config.yaml',
      'deployment.yaml',
      'legacy-config.yaml',
      'namespace.yaml',
      'service.yaml',
    ]);

    await server.deleteFiles(['guestbook/legacy-config.yaml']);
    const second = await source.fetch({ url: server.url, ref: { branch: 'main' } });
    expect(await read(second.commit)).not.toContain('legacy-config.yaml');
  });
});
