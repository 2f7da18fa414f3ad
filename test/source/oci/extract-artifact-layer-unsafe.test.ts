/**
 * extractArtifactLayer against entries a hostile tenant can put in a layer: paths that climb out of the
 * target directory, links, devices, unknown types and paths given twice. Each is refused as
 * ArtifactUnsafe, naming the entry, and nothing is written beside the target directory.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { DEFAULT_ARTIFACT_LIMITS } from '../../../src/source/oci/artifact-limits.js';
import { ArtifactRefusedError } from '../../../src/source/oci/artifact-refused-error.js';
import { extractArtifactLayer } from '../../../src/source/oci/extract-artifact-layer.js';
import {
  bodyOf,
  layerOf,
  makeTarget,
  tarOf,
  treeOf,
  withTypeflag,
  type TarEntry,
} from '../../harness/artifact-layer.js';

const artifact =
  'oci://registry.example.com/team/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const OK: TarEntry = { header: { name: 'ok.yaml' }, content: 'kind: ConfigMap\n' };
const ONLY = 'an artifact may hold only files and directories';
/** Where an absolute entry would land if it were written as it says: never, checked below. */
const ABSOLUTE = `/tmp/applyset-artifact-escape-${process.pid}.yaml`;

let target: Awaited<ReturnType<typeof makeTarget>>;
beforeEach(async () => {
  target = await makeTarget();
});
afterEach(() => target.remove());

/** Extracts `layer` expecting ArtifactUnsafe; returns the message. Nothing may appear beside the target. */
async function refusedMessage(layer: Buffer): Promise<string> {
  const error = await extractArtifactLayer(bodyOf(layer), target.target, {
    limits: DEFAULT_ARTIFACT_LIMITS,
    signal: new AbortController().signal,
    describe: artifact,
  }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ArtifactRefusedError);
  expect(error).toMatchObject({ intent: 'stalled', reason: 'ArtifactUnsafe' });
  expect(await readdir(target.parent)).toEqual(['target']);
  return (error as ArtifactRefusedError).message;
}

const unsafe = (name: string, problem: string) =>
  `artifact ${artifact} has an unsafe entry ${JSON.stringify(name)}: ${problem}; nothing was applied`;

describe('extractArtifactLayer refuses an unsafe entry', () => {
  it.each([
    ['../evil.yaml', 'its path has a ".." name'],
    ['a/../../b.yaml', 'its path has a ".." name'],
    ['a/../b.yaml', 'its path has a ".." name'],
    [ABSOLUTE, 'its path is absolute'],
    ['C:/Windows/evil.yaml', 'its path starts with a Windows drive'],
    ['..\\evil.yaml', 'its path has a backslash'],
    [`${'d/'.repeat(33)}x.yaml`, 'its path is 34 names deep, more than 32'],
    [`${'n'.repeat(256)}.yaml`, 'a name in its path is longer than 255 bytes'],
  ])('a file at %j', async (name, problem) => {
    const message = await refusedMessage(
      await layerOf([OK, { header: { name }, content: 'kind: Secret\n' }]),
    );
    expect(message).toBe(unsafe(name, problem));
    expect(existsSync(ABSOLUTE)).toBe(false);
  });

  it('a directory at "../up", before anything is made', async () => {
    const message = await refusedMessage(await layerOf([{ header: { name: '../up/', type: 'directory' } }]));
    expect(message).toBe(unsafe('../up/', 'its path has a ".." name'));
    expect(await readdir(target.target)).toEqual([]);
  });

  it('a NUL in a name, which only a pax header can carry', async () => {
    const name = `${'x'.repeat(120)}\0.yaml`;
    expect(await refusedMessage(await layerOf([{ header: { name }, content: 'a' }]))).toBe(
      unsafe(name, 'its path has a NUL byte'),
    );
  });

  it.each([
    ['/etc/passwd', 'passwd'],
    ['../../x', 'up'],
    ['ok.yaml', 'alias.yaml'],
  ])('a symbolic link to %j', async (linkname, name) => {
    const message = await refusedMessage(
      await layerOf([OK, { header: { name, type: 'symlink', linkname } }]),
    );
    expect(message).toBe(unsafe(name, `it is a symbolic link to ${JSON.stringify(linkname)}; ${ONLY}`));
    expect(await readdir(target.target)).toEqual(['ok.yaml']);
  });

  it('a link to /etc with a file behind it, refused at the link: nothing reaches /etc', async () => {
    const message = await refusedMessage(
      await layerOf([
        { header: { name: 'a', type: 'symlink', linkname: '/etc' } },
        { header: { name: 'a/passwd' }, content: 'root::0:0::/root:/bin/sh\n' },
      ]),
    );
    expect(message).toBe(unsafe('a', `it is a symbolic link to "/etc"; ${ONLY}`));
    expect(await readdir(target.target)).toEqual([]);
  });

  it.each([
    [{ name: 'hard.yaml', type: 'link', linkname: 'ok.yaml' }, 'it is a hard link to "ok.yaml"'],
    [{ name: 'null', type: 'character-device', devmajor: 1, devminor: 3 }, 'it is a character device'],
    [{ name: 'sda', type: 'block-device', devmajor: 8, devminor: 0 }, 'it is a block device'],
    [{ name: 'pipe', type: 'fifo' }, 'it is a FIFO'],
  ] as const)('%j', async (header, problem) => {
    const message = await refusedMessage(await layerOf([OK, { header }]));
    expect(message).toBe(unsafe(header.name, `${problem}; ${ONLY}`));
    expect(await readdir(target.target)).toEqual(['ok.yaml']);
  });

  it('an entry of a type tar does not define', async () => {
    const archive = withTypeflag(await tarOf([{ header: { name: 'odd' }, content: 'x' }]), 0, 'Z');
    expect(await refusedMessage(gzipSync(archive))).toBe(unsafe('odd', `its entry type is unknown; ${ONLY}`));
  });

  it.each([
    [['a.yaml', 'a.yaml'], 'a.yaml', 'the archive holds that path twice'],
    [['./a.yaml', 'a.yaml'], 'a.yaml', 'the archive holds that path twice'],
    [['a.yaml', 'a.yaml/b.yaml'], 'a.yaml/b.yaml', 'it lies under "a.yaml", which is a file'],
    [['a/b.yaml', 'a'], 'a', 'the archive holds that path as a directory too'],
  ])('a path given twice, not last-wins: %j', async (names, refused, problem) => {
    const message = await refusedMessage(
      await layerOf(names.map((name) => ({ header: { name }, content: `# ${name}\n` }))),
    );
    expect(message).toBe(unsafe(refused, problem));
  });

  it('but takes a directory listed twice, and the root as "./"', async () => {
    const layer = await layerOf([
      { header: { name: './', type: 'directory' } },
      { header: { name: 'apps/', type: 'directory' } },
      { header: { name: 'apps/x.yaml' }, content: 'x' },
      { header: { name: './apps', type: 'directory' } },
    ]);
    await extractArtifactLayer(bodyOf(layer), target.target, {
      limits: DEFAULT_ARTIFACT_LIMITS,
      signal: new AbortController().signal,
      describe: artifact,
    });
    expect(Object.keys(await treeOf(target.target))).toEqual(['apps', 'apps/x.yaml']);
  });
});
