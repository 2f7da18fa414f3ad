import type { JsonObject, JsonValue } from '../../src/manifests/json-value.js';

type WriterContentType =
  | 'application/strategic-merge-patch+json'
  | 'application/merge-patch+json'
  | 'application/json-patch+json';

/**
 * Plain YAML 1.1 lines added to a mapping of the manifest when it is written out as YAML: keys and
 * values such as `on`, `0x1F`, `1.5` or `0644`, spelled as in a hand-written file, so both kubectl
 * and our decoder resolve them (yaml11-scalars.ts).
 */
export interface Yaml11Lines {
  /** The mapping they go into, from the manifest's root (`['spec', 'yaml11']`); created when absent. */
  readonly path: readonly string[];
  /** `key: value` pairs, each side written as is. */
  readonly entries: readonly (readonly [string, string])[];
}

/** One step of a sequence: apply a manifest version, or let another writer change the live object. */
export type DiffStep =
  | { readonly type: 'apply'; readonly manifest: JsonObject; readonly yaml11?: Yaml11Lines }
  | {
      readonly type: 'write';
      readonly description: string;
      readonly contentType: WriterContentType;
      /** An object for the merge patches; a list of operations for a JSON patch. */
      readonly patch: JsonValue;
    };

export function smp(description: string, patch: JsonObject): DiffStep {
  return { type: 'write', description, contentType: 'application/strategic-merge-patch+json', patch };
}

export function mergePatch(description: string, patch: JsonObject): DiffStep {
  return { type: 'write', description, contentType: 'application/merge-patch+json', patch };
}

/** `kubectl patch --type json` with one `remove`: fails on both sides alike when the path is gone. */
export function jsonRemove(description: string, pointer: string): DiffStep {
  return {
    type: 'write',
    description,
    contentType: 'application/json-patch+json',
    patch: [{ op: 'remove', path: pointer }],
  };
}

/** A JSON pointer token: `/` and `~` escaped as RFC 6901 says. */
export function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
