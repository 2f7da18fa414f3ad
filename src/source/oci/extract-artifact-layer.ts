import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract, type Extract } from 'tar-stream';
import { IntentError } from '../../errors/intent-error.js';
import { describeArtifactLimit, type ArtifactLimits } from './artifact-limits.js';
import { ArtifactRefusedError } from './artifact-refused-error.js';
import { writeArtifactEntries } from './write-artifact-entries.js';

interface ExtractArtifactOptions {
  readonly limits: ArtifactLimits;
  /** Stops the extraction: the promise rejects with the signal's reason and the body is read no more. */
  readonly signal: AbortSignal;
  /** The artifact, for messages, e.g. `oci://registry.example.com/team/app@sha256:…`. */
  readonly describe: string;
}

/** A tar archive ends with two zero blocks (POSIX ustar); every writer (Go, GNU, bsdtar) puts them. */
const END_OF_ARCHIVE_BYTES = 1024;

/**
 * Extracts one OCI artifact layer (tar+gzip, as `flux push artifact` and `oras push` make it) into
 * `targetDir`, which the caller has created empty (and renames into its cache once this resolves, or
 * removes once it rejects). The layer is hostile input, so it streams: the compressed bytes read, the
 * bytes they inflate to and the entries are counted as they pass, and the first limit passed stops
 * everything at once (a gzip bomb is inflated no further than the limit). At most a few chunks of the
 * layer are in memory at any time, whatever its size. Entries are checked before they are written (see
 * writeArtifactEntries): nothing is written outside `targetDir`, and no link of any kind is made.
 *
 * Rejects with ArtifactRefusedError (stalled; ArtifactTooLarge, ArtifactUnsafe or ArtifactInvalid), with
 * the signal's reason once it aborts, or with an unexpected error of the file system. When it rejects,
 * nothing more is written to `targetDir`, but what was written stays for the caller to remove.
 */
export async function extractArtifactLayer(
  body: AsyncIterable<Uint8Array>,
  targetDir: string,
  options: ExtractArtifactOptions,
): Promise<{ files: number; bytes: number }> {
  const { signal } = options;
  signal.throwIfAborted();
  const extract = tarExtract();
  // Created first: the iterator listens for the extract's errors from here on.
  const entries = extract[Symbol.asyncIterator]();
  const stop = new AbortController();
  const state: { failure?: { error: unknown } } = {};
  // The first failure wins and stops both halves: the reading of the layer and the writing of entries.
  const fail = (error: unknown): void => {
    if (state.failure !== undefined) return;
    state.failure = { error };
    stop.abort(error);
    extract.destroy(error instanceof Error ? error : new Error(String(error)));
  };
  const onAbort = () => fail(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const feeding = feedLayer(body, extract, options, stop.signal).catch(fail);
    const written = await writeArtifactEntries(entries, { ...options, targetDir }).catch((error: unknown) => {
      fail(error);
      return undefined;
    });
    // The entries end only after the layer did; a failure stops the writing, and the reading with it,
    // without waiting for a body that may never answer again.
    if (state.failure === undefined) await feeding;
    if (state.failure !== undefined) throw state.failure.error;
    if (written === undefined) throw new Error('the artifact extraction ended without a result');
    return written;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Thrown into the pipeline when the extract has closed: whoever closed it reports why. */
class ExtractClosed extends Error {}

/** The layer through gunzip into the tar parser, counted on both sides of gunzip. */
async function feedLayer(
  body: AsyncIterable<Uint8Array>,
  extract: Extract,
  options: ExtractArtifactOptions,
  stop: AbortSignal,
): Promise<void> {
  try {
    await pipeline(
      readLayer(body, options, stop),
      createGunzip(),
      countExpanded(options),
      (source: AsyncIterable<Buffer>) => writeInto(extract, source),
      { signal: stop },
    );
  } catch (error) {
    if (error instanceof ExtractClosed || stop.aborted) return;
    if (error instanceof IntentError || !isZlibError(error)) throw error;
    throw new ArtifactRefusedError(
      'ArtifactInvalid',
      options.describe,
      `is not a valid gzip stream (${error.message})`,
      {
        cause: error,
      },
    );
  }
}

/** The body's chunks, counted against the layer's limit; a stop ends a read that is still waiting. */
async function* readLayer(
  body: AsyncIterable<Uint8Array>,
  { limits, describe }: ExtractArtifactOptions,
  stop: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const stopped = new Promise<never>((_resolve, reject) => {
    if (stop.aborted) reject(stop.reason);
    stop.addEventListener('abort', () => reject(stop.reason), { once: true });
  });
  stopped.catch(() => undefined);
  const iterator = body[Symbol.asyncIterator]();
  let bytes = 0;
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), stopped]);
      if (step.done === true) return;
      bytes += step.value.byteLength;
      if (bytes > limits.maxLayerBytes) {
        throw new ArtifactRefusedError(
          'ArtifactTooLarge',
          describe,
          `has a layer larger than ${describeArtifactLimit(limits, 'maxLayerBytes')}`,
        );
      }
      yield step.value;
    }
  } finally {
    // Not awaited: a body stuck in a read must not hold the refusal back.
    void Promise.resolve()
      .then(() => iterator.return?.())
      .catch(() => undefined);
  }
}

/** The gunzipped bytes, counted against the expanded limit; an archive must end as tar ends one. */
function countExpanded({ limits, describe }: ExtractArtifactOptions) {
  return async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    let bytes = 0;
    let tail: Buffer = Buffer.alloc(0);
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes > limits.maxExpandedBytes) {
        throw new ArtifactRefusedError(
          'ArtifactTooLarge',
          describe,
          `expands past ${describeArtifactLimit(limits, 'maxExpandedBytes')}`,
        );
      }
      tail =
        chunk.length >= END_OF_ARCHIVE_BYTES
          ? chunk.subarray(chunk.length - END_OF_ARCHIVE_BYTES)
          : Buffer.concat([tail, chunk]).subarray(-END_OF_ARCHIVE_BYTES);
      yield chunk;
    }
    if (tail.length < END_OF_ARCHIVE_BYTES || tail.some((byte) => byte !== 0)) {
      throw new ArtifactRefusedError(
        'ArtifactInvalid',
        describe,
        'is not a valid tar archive: it is cut short (it does not end with the two zero blocks that close an archive)',
      );
    }
  };
}

/** Each chunk into the tar parser, waiting while it is full: it fills as fast as entries are written. */
async function writeInto(extract: Extract, source: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of source) {
    if (extract.destroyed) throw new ExtractClosed();
    if (!extract.write(chunk)) await drained(extract);
  }
  if (extract.destroyed) throw new ExtractClosed();
  extract.end(null);
}

function drained(extract: Extract): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      extract.off('drain', done);
      extract.off('close', done);
      resolve();
    };
    extract.on('drain', done);
    extract.on('close', done);
  });
}

/** zlib's errors (`Z_DATA_ERROR`, `Z_BUF_ERROR`), known by their code: they may come from another realm. */
function isZlibError(error: unknown): error is { code: string; message: string } {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' && code.startsWith('Z_') && typeof message === 'string';
}
