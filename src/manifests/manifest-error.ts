import { IntentError, type ObjectError } from '../errors/intent-error.js';

/** Why a manifest was refused. */
export type ManifestErrorCode =
  | 'decode-failed'
  | 'not-an-object'
  | 'missing-field'
  | 'invalid-field'
  | 'duplicate-object'
  | 'unknown-kind'
  | 'namespace-on-cluster-scoped'
  | 'namespace-mismatch'
  | 'file-too-large'
  | 'set-too-large'
  | 'document-too-large'
  | 'excessive-aliasing';

/** Where a manifest came from: a file, the document's index in it, and the item's index in a List. */
export interface ManifestSource {
  readonly file: string;
  /** 0-based; undefined when the whole file failed to decode. */
  readonly documentIndex: number | undefined;
  /** 0-based position inside a flattened `kind: List`. */
  readonly itemIndex?: number;
  /** The kind of the typed list the item came from (`LimitRangeList`); absent for `kind: List`. */
  readonly listKind?: string;
  /** 1-based line and column of a problem the decoder placed in the file. */
  readonly line?: number;
  readonly column?: number;
}

export function describeManifestSource(source: ManifestSource): string {
  let text = source.file;
  if (source.documentIndex !== undefined) text += ` (document ${source.documentIndex}`;
  if (source.itemIndex !== undefined) text += `, item ${source.itemIndex}`;
  if (source.documentIndex !== undefined) text += ')';
  if (source.line !== undefined) text += ` line ${source.line}`;
  if (source.line !== undefined && source.column !== undefined) text += ` column ${source.column}`;
  return text;
}

/**
 * One problem with one manifest. Bad input is a "stalled" error: a human must change the files, so
 * retrying will not help.
 */
export class ManifestError extends IntentError {
  override readonly name = 'ManifestError';
  readonly intent = 'stalled';
  /** `UnknownKind` for a kind nobody serves (installing a CRD fixes it), else `InvalidManifests`. */
  readonly reason: 'UnknownKind' | 'InvalidManifests';
  constructor(
    readonly code: ManifestErrorCode,
    readonly source: ManifestSource,
    /** What we know of the object (`deployment.apps/web -n prod`), when we know anything. */
    readonly object: string | undefined,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${describeManifestSource(source)}${object === undefined ? '' : `: ${object}`}: ${detail}`,
      options,
    );
    this.reason = code === 'unknown-kind' ? 'UnknownKind' : 'InvalidManifests';
  }
}

/** All the problems of a manifest set at once, so one run reports every file to fix. */
export class ManifestSetError extends IntentError {
  override readonly name = 'ManifestSetError';
  readonly code = 'MANIFEST_SET_INVALID';
  readonly intent = 'stalled';
  /** `UnknownKind` when every problem is a kind nobody serves, else `InvalidManifests`. */
  readonly reason: 'UnknownKind' | 'InvalidManifests';
  constructor(readonly errors: readonly ManifestError[]) {
    super(
      `${errors.length} invalid manifest${errors.length === 1 ? '' : 's'}:\n` +
        errors.map((error) => `  ${error.message}`).join('\n'),
    );
    this.reason =
      errors.length > 0 && errors.every((error) => error.reason === 'UnknownKind')
        ? 'UnknownKind'
        : 'InvalidManifests';
  }

  /** Each file with its problem, for `status.errors`. */
  override objectErrors(): readonly ObjectError[] {
    return this.errors.map((error) => ({ object: error.source.file, message: error.message }));
  }
}
