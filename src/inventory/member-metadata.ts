import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import type { MemberMetadata, ParentMetadata } from './applyset-metadata.js';

/*
 * The metadata that marks an object as a member of a set (KEP-3659's part-of label, the kubectl prune
 * proposal's apply-owner annotation) and the parent's own labels and annotations, as new objects and
 * merge patches. Pure: the live object is read, never changed.
 */

/** A merge patch of the parent's labels and annotations, or undefined when the live object has them all. */
export function metadataPatch(live: JsonObject, metadata: ParentMetadata): JsonObject | undefined {
  const liveMeta = isJsonObject(live['metadata']) ? live['metadata'] : {};
  // A wanted null is an annotation to remove: it differs only while the live object has one.
  const differs = (have: JsonValue | undefined, want: Readonly<Record<string, string | null>>) => {
    const map = isJsonObject(have) ? have : {};
    return Object.entries(want).some(([key, value]) => (value === null ? key in map : map[key] !== value));
  };
  const labels = differs(liveMeta['labels'], metadata.labels);
  const annotations = differs(liveMeta['annotations'], metadata.annotations);
  if (!labels && !annotations) return undefined;
  return {
    metadata: {
      ...(labels ? { labels: { ...metadata.labels } } : {}),
      ...(annotations ? { annotations: { ...metadata.annotations } } : {}),
    },
  };
}

/** `modified` plus the member's apply-owner annotation and part-of label. */
export function withMember(modified: JsonObject, member: MemberMetadata): JsonObject {
  const metadata = isJsonObject(modified['metadata']) ? modified['metadata'] : {};
  const labels = isJsonObject(metadata['labels']) ? metadata['labels'] : {};
  const annotations = isJsonObject(metadata['annotations']) ? metadata['annotations'] : {};
  return {
    ...modified,
    metadata: {
      ...metadata,
      labels: { ...labels, ...member.labels },
      annotations: { ...annotations, ...member.annotations },
    },
  };
}

/**
 * The patch to send: the three-way patch, with the ownership metadata added when the live object
 * lacks it. Undefined when there is nothing to send (kubectl's "unchanged"). A `labels: null` in the
 * patch (every label removed from the file) becomes per-key deletions, so our label survives it.
 */
export function withMemberPatch(
  patch: JsonObject | undefined,
  live: JsonObject,
  member: MemberMetadata,
): JsonObject | undefined {
  const liveMeta = isJsonObject(live['metadata']) ? live['metadata'] : {};
  const has = (field: 'labels' | 'annotations', want: Readonly<Record<string, string>>) => {
    const map = isJsonObject(liveMeta[field]) ? liveMeta[field] : {};
    return Object.entries(want).every(([key, value]) => map[key] === value);
  };
  const patchMeta = patch !== undefined && isJsonObject(patch['metadata']) ? patch['metadata'] : undefined;
  const removesAll = (field: 'labels' | 'annotations') =>
    patchMeta !== undefined && patchMeta[field] === null;
  const needLabels = !has('labels', member.labels) || removesAll('labels');
  const needAnnotations = !has('annotations', member.annotations) || removesAll('annotations');
  if (!needLabels && !needAnnotations) return patch;
  const merged = (field: 'labels' | 'annotations', want: Readonly<Record<string, string>>): JsonObject => {
    const current = patchMeta?.[field];
    if (current === null) {
      const liveMap = isJsonObject(liveMeta[field]) ? liveMeta[field] : {};
      return { ...Object.fromEntries(Object.keys(liveMap).map((key) => [key, null])), ...want };
    }
    return { ...(isJsonObject(current) ? current : {}), ...want };
  };
  return {
    ...(patch ?? {}),
    metadata: {
      ...(patchMeta ?? {}),
      ...(needLabels ? { labels: merged('labels', member.labels) } : {}),
      ...(needAnnotations ? { annotations: merged('annotations', member.annotations) } : {}),
    },
  };
}
