import { LruMap } from '../kube/lru-map.js';
import type { DecodedDocument } from '../manifests/decode-documents.js';
import type { DecodedFileMemo } from '../manifests/decode-manifest-files.js';
import type { JsonValue } from '../manifests/json-value.js';

/**
 * Texts kept, by their length: decoded, a text takes several times its size in heap, so 1 Mi characters
 * of YAML (hundreds of files of a typical app) stay well under the controller's memory budget.
 */
const DEFAULT_MAX_TEXT_CHARS = 1024 * 1024;
const MAX_FILES = 4096;

/**
 * The controller's memo (docs/performance.md, #39): values frozen when kept, since every set whose
 * files hold the same text reads the same objects, and an attempt to change one must throw rather than
 * change what another ApplySet applies.
 */
export function createDecodedFileMemo(maxTextChars = DEFAULT_MAX_TEXT_CHARS): DecodedFileMemo {
  const kept = new LruMap<string, readonly DecodedDocument[]>(MAX_FILES, { maxWeight: maxTextChars });
  return {
    get: (text) => kept.get(text),
    keep: (text, documents) => {
      const frozen = Object.freeze(documents.map((document) => deepFreeze(document)));
      kept.set(text, frozen);
      kept.setWeight(text, text.length);
      return frozen;
    },
  };
}

function deepFreeze<T extends DecodedDocument | JsonValue>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const item of Object.values(value) as JsonValue[]) deepFreeze(item);
  return Object.freeze(value);
}
