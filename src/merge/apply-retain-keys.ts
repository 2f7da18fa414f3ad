import type { JsonObject, JsonValue } from '../manifests/json-value.js';
import { goDeepEqual, goScalarEqual } from './go-value.js';
import { MergeError } from './merge-error.js';
import {
  DELETE_FROM_PRIMITIVE_LIST_PREFIX,
  RETAIN_KEYS_DIRECTIVE,
  SET_ELEMENT_ORDER_PREFIX,
  type MergeMode,
} from './patch-directives.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * apimachinery applyRetainKeysDirective. The client carries `$retainKeys` over (two deltas must agree
 * on it); the server removes every live key it does not list, after checking the patch sets no key
 * outside it (docs/merge-semantics.md#7-patch-directives).
 */
export function applyRetainKeys(original: JsonObject, patch: JsonObject, mode: MergeMode): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS_DIRECTIVE)) return;
  const retain = patch[RETAIN_KEYS_DIRECTIVE] as JsonValue;
  delete patch[RETAIN_KEYS_DIRECTIVE];
  if (mode === 'client') {
    if (Object.hasOwn(original, RETAIN_KEYS_DIRECTIVE)) {
      if (!goDeepEqual(original[RETAIN_KEYS_DIRECTIVE], retain)) {
        throw new MergeError(
          'retain-keys-mismatch',
          `${stringifyJson(original[RETAIN_KEYS_DIRECTIVE])} and ${stringifyJson(retain)} are not deep equal: this may happen when calculating the 3-way diff patch`,
        );
      }
    } else {
      original[RETAIN_KEYS_DIRECTIVE] = retain;
    }
    return;
  }
  if (!Array.isArray(retain))
    throw new MergeError('retain-keys-mismatch', 'invalid patch format of retainKeys');
  const keep = (key: string) => retain.some((item) => goScalarEqual(item, key));
  for (const key of Object.keys(patch)) {
    if (
      patch[key] === null ||
      key.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) ||
      key.startsWith(SET_ELEMENT_ORDER_PREFIX)
    ) {
      continue;
    }
    if (!keep(key)) throw new MergeError('retain-keys-mismatch', 'invalid patch format of retainKeys');
  }
  for (const key of Object.keys(original)) if (!keep(key)) delete original[key];
}
