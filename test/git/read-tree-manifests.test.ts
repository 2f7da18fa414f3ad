/**
 * readTreeManifests: malformed trees no Git server packs (an in-memory object store stands in for the
 * repository), and the order and paths of what it reads, compared with kubectl's order as the directory
 * reader finds it in a real `git archive` of the same commit.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GitUnsafeTreeError } from '../../src/git/git-error.js';
import { createGitSource } from '../../src/git/git-source.js';
import { readTreeManifests, type GitObjectReader } from '../../src/git/read-tree-manifests.js';
import type { ManifestFile } from '../../src/manifests/manifest-limits.js';
import { readManifestDirectory } from '../../src/source/read-manifest-directory.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';

const run = promisify(execFile);

/** An object store in memory: oids are counters, which is all the reader needs from them. */
function memoryStore() {
  const objects = new Map<string, { type: string; content: Uint8Array }>();
  const put = (type: string, content: Uint8Array | string): string => {
    const oid = (objects.size + 1).toString(16).padStart(40, '0');
    objects.set(oid, { type, content: typeof content === 'string' ? Buffer.from(content) : content });
    return oid;
  };
  const reader: GitObjectReader = {
    read: async (oid) => {
      const object = objects.get(oid);
      if (object === undefined) throw new Error(`no object ${oid}`);
      return object;
    },
  };
  return { put, reader };
}

function entry(mode: string, name: string, oid: string): Buffer {
  return Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')]);
}

describe('readTreeManifests on trees no Git server packs', () => {
  const readRoot = async (build: (store: ReturnType<typeof memoryStore>) => string) => {
    const store = memoryStore();
    const tree = build(store);
    return readTreeManifests({ reader: store.reader, commit: 'c0ffee', tree, sourcePath: '' }).catch(
      (error: unknown) => error,
    );
  };

  it.each<[string, (store: ReturnType<typeof memoryStore>) => string, string]>([
    [
      'an empty name',
      ({ put }) => put('tree', entry('100644', '', put('blob', 'a: 1\n'))),
      'unsafe repository: entry "" has an empty name',
    ],
    [
      'a NUL inside a name (the rest is not a tree entry)',
      ({ put }) =>
        put('tree', Buffer.concat([entry('100644', 'a\0b.yaml', put('blob', 'a: 1\n')), Buffer.from('x')])),
      'unsafe repository: entry "/" is a malformed tree object',
    ],
    [
      'a tree entry whose object is a blob',
      ({ put }) => put('tree', entry('40000', 'deploy', put('blob', 'a: 1\n'))),
      'unsafe repository: entry "deploy" is listed as a tree but its object is a blob',
    ],
    [
      'a file entry whose object is a tree',
      ({ put }) => put('tree', entry('100644', 'x.yaml', put('tree', ''))),
      'unsafe repository: entry "x.yaml" is listed as a blob but its object is a tree',
    ],
    [
      'two entries of one name, a directory and a file',
      ({ put }) =>
        put(
          'tree',
          Buffer.concat([entry('100644', 'x', put('blob', '')), entry('40000', 'x', put('tree', ''))]),
        ),
      'unsafe repository: entry "x" appears twice in its tree',
    ],
  ])('refuses %s', async (_name, build, message) => {
    const error = await readRoot(build);
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect(error).toMatchObject({ message, intent: 'stalled' });
  });
});

describe('readTreeManifests and links that cost too much to follow', () => {
  it('refuses a link whose target names more than 4096 components', async () => {
    const { put, reader } = memoryStore();
    let nested = put('tree', entry('100644', 'cm.yaml', put('blob', 'a: 1\n')));
    for (let depth = 0; depth < 5000; depth += 1) nested = put('tree', entry('40000', 'a', nested));
    const target = `${Array.from({ length: 5000 }, () => 'a').join('/')}/cm.yaml`;
    const tree = put(
      'tree',
      Buffer.concat([entry('40000', 'a', nested), entry('120000', 'x.yaml', put('blob', target))]),
    );
    const error: unknown = await readTreeManifests({
      reader,
      commit: 'c0ffee',
      tree,
      sourcePath: 'x.yaml',
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitUnsafeTreeError);
    expect((error as Error).message).toMatch(/is reached through more than 4096 names$/);
  });
});

describe('readTreeManifests and the size limits', () => {
  /** A root tree of files `a.yaml`, `b.yaml`, … with the given texts, and the blobs the reader was asked for. */
  const store = (texts: readonly string[]) => {
    const { put, reader } = memoryStore();
    const blobs = texts.map((text) => put('blob', text));
    const names = texts.map((_text, index) => `${String.fromCharCode(97 + index)}.yaml`);
    const tree = put('tree', Buffer.concat(blobs.map((oid, index) => entry('100644', names[index]!, oid))));
    const asked: string[] = [];
    const counting: GitObjectReader = {
      read: async (oid) => {
        const index = blobs.indexOf(oid);
        if (index >= 0) asked.push(names[index]!);
        return reader.read(oid);
      },
    };
    return { reader: counting, tree, asked };
  };

  it('lists a file over the per-file limit unread, naming it, and reads the others', async () => {
    const { reader, tree } = store(['a: 1\n', 'b: 22222222\n', 'c: 3\n']);
    const files = await readTreeManifests({
      reader,
      commit: 'c0ffee',
      tree,
      sourcePath: '',
      limits: { maxFileBytes: 8 },
    });
    expect(files).toEqual([
      { path: 'a.yaml', text: 'a: 1\n', byteLength: 5 },
      {
        path: 'b.yaml',
        text: '',
        byteLength: 12,
        unread: { kind: 'file-too-large', detail: expect.stringContaining('12 bytes') as unknown },
      },
      { path: 'c.yaml', text: 'c: 3\n', byteLength: 5 },
    ]);
  });

  it('stops reading once the set is over its total', async () => {
    const { reader, tree, asked } = store(['a: 1\n', 'b: 2\n', 'c: 3\n', 'd: 4\n']);
    const files = await readTreeManifests({
      reader,
      commit: 'c0ffee',
      tree,
      sourcePath: '',
      limits: { maxSetBytes: 12 },
    });
    expect(files.map((file) => [file.path, file.unread?.kind])).toEqual([
      ['a.yaml', undefined],
      ['b.yaml', undefined],
      ['c.yaml', 'set-too-large'],
    ]);
    expect(asked).toEqual(['a.yaml', 'b.yaml', 'c.yaml']);
  });
});

describe('readTreeManifests reads what kubectl reads of a checkout, in the same order', () => {
  let server: GitTestServer | undefined;
  let scratch: string;

  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'read-tree-manifests-test-'));
  });

  afterEach(async () => {
    await server?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it.each(['', 'apps', 'apps/web.yaml'])('at path %j', async (sourcePath) => {
    const names = [
      'apps/B.yaml',
      'apps/a.YAML',
      'apps/a.json',
      'apps/a.yml',
      'apps/b.yaml',
      'apps/web.yaml',
      'apps/z-/x.yaml',
      'apps/z.yaml',
      'apps/z/x.yaml',
      'apps/za.yaml',
      'apps/\u00e9.yaml',
      'apps/\u{1f600}.yaml',
      'apps/.hidden.yaml',
      'apps/.yaml',
      'apps/README.md',
      'apps/deep/er/one.yml',
      'top.yaml',
    ];
    server = await startGitServer({
      files: Object.fromEntries(names.map((name) => [name, `name: ${JSON.stringify(name)}\n`])),
    });
    const source = createGitSource({ cacheDir: path.join(scratch, 'cache'), allowedHosts: ['127.0.0.1'] });
    const fetched = await source.fetch({ url: server.url, ref: { branch: 'main' } });
    const checkout = path.join(scratch, 'checkout');
    await run('sh', [
      '-c',
      `mkdir "$2" && git --git-dir="$1" archive --format=tar "$3" | tar -x -C "$2"`,
      'sh',
      server.repositoryDir,
      checkout,
      fetched.commit,
    ]);

    const fromTree = await source.readManifests({
      url: server.url,
      commit: fetched.commit,
      path: sourcePath,
    });
    const fromDirectory = await readManifestDirectory(path.join(checkout, sourcePath));
    const pathAndText = (files: readonly ManifestFile[]) => files.map(({ path, text }) => ({ path, text }));
    expect(fromTree.length).toBeGreaterThan(0);
    expect(pathAndText(fromTree)).toEqual(pathAndText(fromDirectory));
  });
});
