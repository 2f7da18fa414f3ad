import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_MANIFEST_LIMITS,
  checkManifestFileSize,
  createManifestReadBudget,
  utf8ByteLength,
  type ManifestFile,
} from '../../src/manifests/manifest-limits.js';
import { parseManifestSet } from '../../src/manifests/parse-manifest-set.js';
import { readManifestDirectory } from '../../src/source/read-manifest-directory.js';
import { staticScopeResolver } from './static-scope-resolver.js';
import { nestedListBomb } from './yaml-bombs.js';

const scopes = staticScopeResolver({ '/ConfigMap': 'Namespaced' });
const configMap = (name: string, value = 'v') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: "${value}"\n`;

function refusals(files: readonly ManifestFile[], limits?: { maxFileBytes?: number; maxSetBytes?: number }) {
  const result = parseManifestSet(files, { defaultNamespace: 'default', scopes, ...(limits && { limits }) });
  if (result.ok) throw new Error('expected the set to be refused');
  return result.errors.map((error) => ({
    code: error.code,
    file: error.source.file,
    message: error.message,
  }));
}

describe('checkManifestFileSize', () => {
  it('defaults to 10 MiB per file and 32 MiB per set', () => {
    expect(DEFAULT_MANIFEST_LIMITS).toEqual({ maxFileBytes: 10 * 2 ** 20, maxSetBytes: 32 * 2 ** 20 });
    expect(checkManifestFileSize(10 * 2 ** 20, 0)).toBeUndefined();
    expect(checkManifestFileSize(10 * 2 ** 20 + 1, 0)).toEqual({
      kind: 'file-too-large',
      detail: 'the file is 10 MiB, over the limit of 10 MiB per manifest file',
    });
    expect(checkManifestFileSize(2 ** 20, 31.5 * 2 ** 20)).toMatchObject({
      kind: 'set-too-large',
      detail: expect.stringContaining('over the limit of 32 MiB per set'),
    });
  });

  it('counts UTF-8 bytes, as the file has them on disk', () => {
    expect(utf8ByteLength('aé€😀')).toBe(Buffer.byteLength('aé€😀'));
  });
});

describe('createManifestReadBudget', () => {
  it('admits files until the set is full, stands in for refused ones, and stays closed after', () => {
    const budget = createManifestReadBudget({ maxFileBytes: 100, maxSetBytes: 250 });
    expect(budget.refuse('a.yaml', 100)).toBeUndefined();
    expect(budget.refuse('huge.yaml', 101)).toMatchObject({
      path: 'huge.yaml',
      text: '',
      byteLength: 101,
      unread: { kind: 'file-too-large' },
    });
    expect(budget.exhausted).toBe(false);
    expect(budget.refuse('b.yaml', 100)).toBeUndefined();
    expect(budget.refuse('c.yaml', 51)).toMatchObject({ path: 'c.yaml', unread: { kind: 'set-too-large' } });
    expect(budget.exhausted).toBe(true);
  });
});

describe('parseManifestSet within the size limits', () => {
  it('refuses a file over the limit naming it, and still reports the problems of the others', () => {
    const errors = refusals(
      [
        { path: 'a.yaml', text: configMap('a') },
        { path: 'huge.yaml', text: configMap('huge', 'x'.repeat(2000)) },
        { path: 'c.yaml', text: 'kind: ConfigMap\nmetadata: {name: c}\n' },
      ],
      { maxFileBytes: 1000 },
    );
    expect(errors).toEqual([
      {
        code: 'file-too-large',
        file: 'huge.yaml',
        message: 'huge.yaml: the file is 2 KiB, over the limit of 1000 bytes per manifest file',
      },
      expect.objectContaining({ code: 'missing-field', file: 'c.yaml' }),
    ]);
  });

  it('refuses a set whose files together pass the limit, naming the limit, and decodes nothing after', () => {
    const files = ['a', 'b', 'c', 'd'].map((name) => ({ path: `${name}.yaml`, text: configMap(name) }));
    // d.yaml is invalid, but decoding stops at the file that takes the set over its total.
    files[3] = { path: 'd.yaml', text: 'not: [closed\n' };
    const size = utf8ByteLength(configMap('a'));
    expect(refusals(files, { maxSetBytes: 2 * size + 1 })).toEqual([
      {
        code: 'set-too-large',
        file: 'c.yaml',
        message:
          `c.yaml: the files of the set reach ${3 * size} bytes with this one, over the limit of ` +
          `${2 * size + 1} bytes per set; the files after it were not read`,
      },
    ]);
  });

  it('refuses a file a reader left unread, whatever its own limits', () => {
    const budget = createManifestReadBudget();
    const unread = budget.refuse('huge.yaml', 11 * 2 ** 20);
    expect(unread).toBeDefined();
    expect(refusals([unread as ManifestFile], { maxFileBytes: 2 ** 30, maxSetBytes: 2 ** 30 })).toEqual([
      expect.objectContaining({ code: 'file-too-large', file: 'huge.yaml' }),
    ]);
  });

  it('refuses a billion-laughs file naming the file and document, with the other files checked', () => {
    const errors = refusals([
      { path: 'ok.yaml', text: configMap('ok') },
      { path: 'bomb.yaml', text: `${configMap('before')}---\n${nestedListBomb()}` },
    ]);
    expect(errors).toEqual([
      {
        code: 'excessive-aliasing',
        file: 'bomb.yaml',
        message: expect.stringMatching(/^bomb\.yaml \(document 1\): document contains excessive aliasing/),
      },
    ]);
  });

  it('refuses a set whose decoded documents together pass the limit', () => {
    const alias = (name: string) =>
      `${configMap(name)}x: &x "${'y'.repeat(200)}"\ncopies: [${Array<string>(10).fill('*x').join(', ')}]\n`;
    const files = ['a', 'b', 'c'].map((name) => ({ path: `${name}.yaml`, text: alias(name) }));
    expect(refusals(files, { maxSetBytes: 4000 })).toEqual([
      {
        code: 'set-too-large',
        file: 'b.yaml',
        message:
          'b.yaml (document 0): the documents of the set decode to more than 3.9 KiB of keys and values, ' +
          'over the limit per set',
      },
    ]);
  });
});

describe('readManifestDirectory within the size limits', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'manifest-limits-'));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('does not read a file over the default limit, and the set is refused naming it', async () => {
    await writeFile(path.join(scratch, 'a.yaml'), configMap('a'));
    // A sparse file: 10 MiB and one byte by its size, nothing on disk, never read.
    await writeFile(path.join(scratch, 'huge.yaml'), '');
    await truncate(path.join(scratch, 'huge.yaml'), 10 * 2 ** 20 + 1);
    const files = await readManifestDirectory(scratch);
    expect(files).toEqual([
      { path: 'a.yaml', text: configMap('a') },
      { path: 'huge.yaml', text: '', byteLength: 10 * 2 ** 20 + 1, unread: expect.anything() },
    ]);
    expect(refusals(files)).toEqual([
      {
        code: 'file-too-large',
        file: 'huge.yaml',
        message: 'huge.yaml: the file is 10 MiB, over the limit of 10 MiB per manifest file',
      },
    ]);
  });

  it('stops reading once the files pass the total of the set', async () => {
    for (const name of ['a', 'b', 'c', 'd'])
      await writeFile(path.join(scratch, `${name}.yaml`), configMap(name));
    const size = utf8ByteLength(configMap('a'));
    const files = await readManifestDirectory(scratch, { limits: { maxSetBytes: 2 * size } });
    expect(files.map((file) => [file.path, file.unread?.kind])).toEqual([
      ['a.yaml', undefined],
      ['b.yaml', undefined],
      ['c.yaml', 'set-too-large'],
    ]);
  });

  it('checks a single file given as the root before reading it', async () => {
    await writeFile(path.join(scratch, 'one.yaml'), configMap('one', 'z'.repeat(500)));
    const [file] = await readManifestDirectory(path.join(scratch, 'one.yaml'), {
      limits: { maxFileBytes: 100 },
    });
    expect(file).toMatchObject({ path: 'one.yaml', text: '', unread: { kind: 'file-too-large' } });
  });
});
