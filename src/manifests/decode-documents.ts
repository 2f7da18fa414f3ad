import yaml from 'js-yaml';
import type { JsonValue } from './json-value.js';

/** One YAML document of a file, or the single document of a JSON file. `value` is null when empty. */
export interface DecodedDocument {
  /** 0-based position of the document in its file. */
  readonly index: number;
  readonly value: JsonValue;
}

export class ManifestDecodeError extends Error {
  override readonly name = 'ManifestDecodeError';
  readonly code = 'MANIFEST_DECODE';
  constructor(
    readonly source: string,
    readonly documentIndex: number | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${source}${documentIndex === undefined ? '' : ` (document ${documentIndex})`}: ${message}`,
      options,
    );
  }
}

/**
 * Decodes a manifest file's text into documents. TODO(merge engine): YAML 1.1 scalar rules as
 * kubectl (sigs.k8s.io/yaml over go-yaml v2) applies them.
 */
export function decodeDocuments(text: string, source: string): DecodedDocument[] {
  try {
    const docs: DecodedDocument[] = [];
    yaml.loadAll(text, (doc) => docs.push({ index: docs.length, value: (doc ?? null) as JsonValue }));
    return docs;
  } catch (error) {
    throw new ManifestDecodeError(source, undefined, error instanceof Error ? error.message : String(error), {
      cause: error,
    });
  }
}
