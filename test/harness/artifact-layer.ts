/**
 * OCI artifact layers (tar+gzip) built for tests: from entries with tar-stream's pack, from a directory
 * with the system's `tar -czf`, or as a gzip stream made lazily from a generator, so a test can send a
 * gigabyte without holding it.
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';

export interface TarEntry {
  readonly header: Partial<Header> & Pick<Header, 'name'>;
  readonly content?: string | Buffer;
}

/** The archive of `entries`, in their order, ungzipped. */
export async function tarOf(entries: Iterable<TarEntry>): Promise<Buffer> {
  const archive = pack();
  for (const { header, content } of entries) {
    if (content === undefined) archive.entry(header);
    else archive.entry(header, content);
  }
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The layer of `entries`: tar, then gzip. */
export async function layerOf(entries: Iterable<TarEntry>): Promise<Buffer> {
  return gzipSync(await tarOf(entries));
}

/** `tar -czf` of the directory's contents (`-C dir .`), with tar's extra options. */
export function systemTarLayer(dir: string, options: readonly string[] = []): Buffer {
  return execFileSync('tar', [...options, '-czf', '-', '-C', dir, '.'], { maxBuffer: 64 * 1024 * 1024 });
}

/** A layer as a registry body: chunks of `size` bytes. */
export async function* bodyOf(layer: Uint8Array, size = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < layer.length; offset += size) yield layer.subarray(offset, offset + size);
}

/** `source` gzipped as it is read: nothing is produced before the reader asks for it. */
export async function* gzipLazily(source: Iterable<Buffer>): AsyncGenerator<Uint8Array> {
  const gzip = pipeline(Readable.from(source), createGzip(), () => undefined);
  try {
    for await (const chunk of gzip) yield chunk as Buffer;
  } finally {
    gzip.destroy();
  }
}

/** `bytes` zeros, 1 MiB at a time, from one buffer. */
export function* zeros(bytes: number): Generator<Buffer> {
  const block = Buffer.alloc(1024 * 1024);
  for (let sent = 0; sent < bytes; sent += block.length)
    yield block.subarray(0, Math.min(block.length, bytes - sent));
}

/** The header at `offset` of an archive given the typeflag `flag`, its checksum made right again. */
export function withTypeflag(archive: Buffer, offset: number, flag: string): Buffer {
  const copy = Buffer.from(archive);
  const header = copy.subarray(offset, offset + 512);
  header.write(flag, 156, 'latin1');
  setChecksum(header);
  return copy;
}

/** A fresh directory with an empty `target` in it: the parent shows whatever was written beside it. */
export async function makeTarget(): Promise<{ parent: string; target: string; remove: () => Promise<void> }> {
  const parent = await mkdtemp(join(tmpdir(), 'artifact-layer-'));
  const target = join(parent, 'target');
  await mkdir(target);
  return { parent, target, remove: () => rm(parent, { recursive: true, force: true }) };
}

/** Every path under `dir` (links not followed) with its content (`dir/` for a directory) and mode. */
export async function treeOf(dir: string): Promise<Record<string, { content: string; mode: string }>> {
  const tree: Record<string, { content: string; mode: string }> = {};
  for (const path of (await readdir(dir, { recursive: true })).sort()) {
    const info = await lstat(join(dir, path));
    const mode = (info.mode & 0o7777).toString(8);
    tree[path] = info.isDirectory()
      ? { content: 'dir/', mode }
      : { content: (await readFile(join(dir, path))).toString('utf8'), mode };
  }
  return tree;
}

/**
 * A ustar archive of `count` empty files named by `name(index)`, built header by header: tar-stream's
 * pack takes seconds for a hundred thousand entries.
 */
export async function emptyFilesTar(count: number, name: (index: number) => string): Promise<Buffer> {
  const template = (
    await tarOf([{ header: { name: 'template', mtime: new Date(0) }, content: '' }])
  ).subarray(0, 512);
  const archive = Buffer.alloc((count + 2) * 512);
  for (let index = 0; index < count; index += 1) {
    const header = archive.subarray(index * 512, (index + 1) * 512);
    template.copy(header);
    header.fill(0, 0, 100);
    header.write(name(index), 0, 100, 'utf8');
    setChecksum(header);
  }
  return archive;
}

function setChecksum(header: Buffer): void {
  header.fill(0x20, 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
}
