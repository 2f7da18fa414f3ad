import type { JsonObject } from '../manifests/json-value.js';
import { createThreeWayMergePatch } from './create-three-way-merge-patch.js';
import { encodeGoJson } from './encode-go-json.js';
import { createThreeWayJsonMergePatch } from './json-merge-patch.js';
import { buildLastAppliedConfiguration, readLastAppliedConfiguration } from './last-applied-configuration.js';
import type { PatchMeta } from './patch-meta.js';

type ApplyPatchType = 'application/strategic-merge-patch+json' | 'application/merge-patch+json';

export interface ApplyPatchInput {
  /** The decoded manifest, namespace already defaulted for namespaced kinds. */
  readonly manifest: JsonObject;
  /** The live object from a GET. */
  readonly current: JsonObject;
  /**
   * The last-applied configuration. Omitted: read from `current`'s annotation as kubectl does
   * (absent annotation: no original). `null`: no original.
   */
  readonly original?: JsonObject | null;
  /**
   * Patch metadata for a strategic merge patch, or `json-merge` for custom resources
   * (docs/merge-semantics.md#8-patch-metadata).
   */
  readonly meta: PatchMeta | 'json-merge';
  /**
   * kubectl's `--overwrite`, true by default; false turns on conflict detection
   * (docs/merge-semantics.md#5-combining-and-conflicts).
   */
  readonly overwrite?: boolean;
}

export type ApplyPatch =
  | { readonly kind: 'unchanged'; readonly modified: JsonObject }
  | {
      readonly kind: 'patch';
      readonly patchType: ApplyPatchType;
      readonly patch: JsonObject;
      /** The request body, byte for byte what kubectl sends. */
      readonly body: string;
      /** The manifest with its new annotation (also the body to POST if the object is gone). */
      readonly modified: JsonObject;
    };

/**
 * What `kubectl apply` (client-side) would send for one existing object: build the annotation and
 * the modified document, compute the three-way patch, and call it unchanged exactly when the patch
 * text is `{}` (kubectl sends nothing then: docs/merge-semantics.md#13-unchanged-create-and-retries).
 * Pure.
 */
export function computeApplyPatch(input: ApplyPatchInput): ApplyPatch {
  const { modified } = buildLastAppliedConfiguration(input.manifest);
  const original =
    input.original === undefined ? readLastAppliedConfiguration(input.current) : input.original;
  const documents = { original, modified, current: input.current };
  const patch =
    input.meta === 'json-merge'
      ? createThreeWayJsonMergePatch(documents)
      : createThreeWayMergePatch(documents, input.meta, { overwrite: input.overwrite ?? true });
  const body = encodeGoJson(patch);
  if (body === '{}') return { kind: 'unchanged', modified };
  const patchType: ApplyPatchType =
    input.meta === 'json-merge' ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json';
  return { kind: 'patch', patchType, patch, body, modified };
}
