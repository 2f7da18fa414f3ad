import { ManifestDecodeError } from '../manifests/decode-documents.js';
import type { ManifestError, ManifestErrorCode } from '../manifests/manifest-error.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { parseManifestSet } from '../manifests/parse-manifest-set.js';

/**
 * Problems a manifest has whatever the cluster says: it does not decode, lacks a field, repeats an
 * object, is too large. The kinds' scopes (which only discovery knows) decide the others, so those are
 * left to the engine.
 */
const CLUSTER_INDEPENDENT: ReadonlySet<ManifestErrorCode> = new Set<ManifestErrorCode>([
  'decode-failed',
  'not-an-object',
  'missing-field',
  'invalid-field',
  'duplicate-object',
  'file-too-large',
  'set-too-large',
  'document-too-large',
  'excessive-aliasing',
]);

/**
 * The set's problems found without the cluster, one line each, so `applyset apply -f broken/` names
 * the broken file even when the cluster is down, as kubectl reports a file it cannot decode before
 * it connects. Every kind is taken as namespaced here: that decides no problem kept.
 */
export function findManifestErrorsOffline(files: readonly ManifestFile[]): string[] {
  const parsed = parseManifestSet(files, {
    defaultNamespace: 'default',
    scopes: { scopeOf: () => 'Namespaced' },
  });
  if (parsed.ok) return [];
  return parsed.errors.filter((error) => CLUSTER_INDEPENDENT.has(error.code)).map(problemLine);
}

/** A decode error already starts with the file, document, line and column: name the file once. */
function problemLine(error: ManifestError): string {
  return error.cause instanceof ManifestDecodeError ? error.cause.message : error.message;
}
