import { messageOf } from '../errors/message-of.js';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeDocuments } from '../manifests/decode-documents.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { parseApiVersion, type GroupVersionKind } from '../manifests/object-ref.js';
import { applyStrategicMergePatch } from '../merge/apply-strategic-merge-patch.js';
import { builtinPatchMeta } from '../merge/builtin-patch-meta.js';
import { computeApplyPatch } from '../merge/compute-apply-patch.js';
import { encodeGoJson } from '../merge/encode-go-json.js';
import { applyJsonMergePatch } from '../merge/json-merge-patch.js';
import { readLastAppliedConfiguration } from '../merge/last-applied-configuration.js';
import type { Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';

const usage = `usage: applyset patch --manifest FILE --live FILE [--last-applied FILE]
                     [--api-version V --kind K] [--json-merge]

Prints {"patch": …, "result": …}: the patch kubectl apply would send for the manifest against the
live object ({} when it would report "unchanged"), and the live object after the API server applies
it. Files may be YAML or JSON. Without --last-applied the original is the live object's
kubectl.kubernetes.io/last-applied-configuration annotation, as kubectl reads it.
`;

/** Bad flags or files: reported as one line, with the bad-input exit code. */
class PatchInputError extends Error {
  override readonly name = 'PatchInputError';
  readonly code = 'PATCH_INPUT';
}

/**
 * `applyset patch`: the merge engine on files, for people debugging an apply and for tests. Built-in
 * kinds use the committed patch-metadata table; other kinds, and `--json-merge`, take the JSON merge
 * path custom resources take.
 */
export const patchCommand: Command = async (argv, io) => {
  let flags;
  try {
    flags = parseArgs({
      args: [...argv],
      options: {
        manifest: { type: 'string' },
        live: { type: 'string' },
        'last-applied': { type: 'string' },
        'api-version': { type: 'string' },
        kind: { type: 'string' },
        'json-merge': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    io.stderr.write(`applyset patch: ${messageOf(error)}\n\n${usage}`);
    return ExitCode.badInput;
  }
  if (flags.help) {
    io.stdout.write(usage);
    return ExitCode.ok;
  }
  try {
    if (flags.manifest === undefined || flags.live === undefined) {
      throw new PatchInputError('--manifest and --live are required');
    }
    const manifest = await readObject(io.cwd, flags.manifest);
    const live = await readObject(io.cwd, flags.live);
    const original =
      flags['last-applied'] === undefined
        ? readLastAppliedConfiguration(live)
        : await readObject(io.cwd, flags['last-applied']);
    const gvk = typeOf(manifest, live, flags['api-version'], flags.kind);
    const meta = flags['json-merge'] ? undefined : builtinPatchMeta(gvk);
    const outcome = computeApplyPatch({
      manifest: withLiveNamespace(manifest, live),
      current: live,
      original,
      meta: meta ?? 'json-merge',
    });
    const patch = outcome.kind === 'unchanged' ? {} : outcome.patch;
    const result =
      meta === undefined ? applyJsonMergePatch(live, patch) : applyStrategicMergePatch(live, patch, meta);
    io.stdout.write(`${encodeGoJson({ patch, result })}\n`);
    return ExitCode.ok;
  } catch (error) {
    io.stderr.write(`applyset patch: ${messageOf(error)}\n`);
    return ExitCode.badInput;
  }
};

async function readObject(cwd: string, file: string): Promise<JsonObject> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new PatchInputError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        cause: error,
      },
    );
  }
  const documents = decodeDocuments(text, file).filter((document) => document.value !== null);
  const [first, ...rest] = documents;
  if (first === undefined || rest.length > 0) {
    throw new PatchInputError(`${file}: expected exactly one document, found ${documents.length}`);
  }
  if (!isJsonObject(first.value)) throw new PatchInputError(`${file}: the document is not an object`);
  return first.value;
}

/** The type from the flags, else the manifest, else the live object. */
function typeOf(
  manifest: JsonObject,
  live: JsonObject,
  apiVersionFlag?: string,
  kindFlag?: string,
): GroupVersionKind {
  const apiVersion = apiVersionFlag ?? stringField(manifest, 'apiVersion') ?? stringField(live, 'apiVersion');
  const kind = kindFlag ?? stringField(manifest, 'kind') ?? stringField(live, 'kind');
  if (apiVersion === undefined || kind === undefined) {
    throw new PatchInputError('the documents do not name their type: pass --api-version and --kind');
  }
  const parsed = parseApiVersion(apiVersion);
  if (parsed === undefined) throw new PatchInputError(`invalid apiVersion "${apiVersion}"`);
  return { ...parsed, kind };
}

function stringField(object: JsonObject, key: string): string | undefined {
  const value = object[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * kubectl defaults a namespaced manifest's namespace before building the annotation; here the live
 * object tells us both that the kind is namespaced and which namespace applies.
 */
function withLiveNamespace(manifest: JsonObject, live: JsonObject): JsonObject {
  const liveNamespace = isJsonObject(live.metadata) ? live.metadata.namespace : undefined;
  const metadata = isJsonObject(manifest.metadata) ? manifest.metadata : {};
  if (typeof liveNamespace !== 'string' || liveNamespace === '' || metadata.namespace !== undefined)
    return manifest;
  return { ...manifest, metadata: { ...metadata, namespace: liveNamespace } };
}
