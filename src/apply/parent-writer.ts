import { applySetParentMetadata, type ParentMetadata } from '../inventory/applyset-metadata.js';
import type { Inventory } from '../inventory/inventory.js';
import {
  annotationBytes,
  InventoryTooLargeError,
  TOTAL_ANNOTATION_LIMIT_BYTES,
} from '../inventory/inventory-encoding.js';
import { liveResourceVersion, liveUid } from '../inventory/live-state.js';
import { metadataPatch } from '../inventory/member-metadata.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { ApplySetParent, ApplySetRequest } from './apply-set-contract.js';
import { ParentChangedError } from './parent-changed-error.js';
import type { ParentState } from './prepare-run.js';
import type { RunContext } from './run-context.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/** The run's writes of its apply-config object, and the object as the last of them left it. */
export interface ParentWriter {
  /** The parent as last read or written; undefined until it exists. */
  readonly live: () => JsonObject | undefined;
  /** The parent's uid: the owner every member's apply-owner names; undefined until it exists. */
  readonly ownerUid: () => string | undefined;
  /** Merges labels and annotations into the parent, creating it when it does not exist yet. */
  readonly write: (metadata: ParentMetadata) => Promise<void>;
  /** Writes the inventory annotation and its group-kinds, without the hash. */
  readonly writeInventory: (inventory: Inventory) => Promise<void>;
  /** The inventory the parent records: as last written by this run, or as read. */
  readonly inventory: () => Inventory;
  /**
   * Another write of ours (the controller's status write while the run waits) left the parent at this
   * version: the run's next write is conditional on it.
   */
  readonly moved: (resourceVersion: string) => void;
}

export function createParentWriter(
  parent: ParentState,
  request: Pick<ApplySetRequest, 'input' | 'signal'>,
  context: Pick<RunContext, 'parentApi' | 'tooling'>,
): ParentWriter {
  const { signal } = request;
  const spec = request.input.parent;
  let live = parent.live;
  let recorded = parent.inventory;

  const create = async (metadata: ParentMetadata) => {
    live = await context.parentApi.create(parent.location, newParentBody(spec, metadata), signal);
  };

  const write = async (metadata: ParentMetadata) => {
    if (live === undefined) return create(metadata);
    const patch = withFinalizer(metadataPatch(live, metadata), live, spec.finalizer);
    if (patch === undefined) return;
    try {
      live = await context.parentApi.patch(
        parent.location,
        spec.name,
        'application/merge-patch+json',
        stringifyJson(guardedByResourceVersion(patch, live)),
        signal,
      );
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 409) {
        throw new ParentChangedError(describeObjectRef(parent.ref), { cause: error });
      }
      throw error;
    }
  };

  // The hash is left off: only the last step writes it, once every step before it has run. A parent
  // that does not exist yet is not created for an empty inventory: a run in which every object was
  // refused (conflicts) leaves nothing behind, not an empty apply-config object.
  const writeInventory = async (inventory: Inventory) => {
    if (live === undefined && inventory.length === 0) return;
    const metadata = applySetParentMetadata({
      parent: parent.kep,
      inventory,
      tooling: context.tooling,
      withHash: false,
    });
    // The server refuses an object whose annotations add up past its limit: find out here, before
    // this (the run's first write) rather than from a raw 422 after it, and say what is over.
    const bytes = annotationBytes({ ...liveAnnotations(live), ...metadata.annotations });
    if (bytes > TOTAL_ANNOTATION_LIMIT_BYTES) {
      throw new InventoryTooLargeError(describeObjectRef(parent.ref), inventory.length, bytes);
    }
    await write(metadata);
    recorded = inventory;
  };

  return {
    live: () => live,
    ownerUid: () => (live === undefined ? undefined : liveUid(live)),
    write,
    writeInventory,
    inventory: () => recorded,
    moved: (resourceVersion) => {
      if (live === undefined) return;
      const metadata = isJsonObject(live['metadata']) ? live['metadata'] : {};
      live = { ...live, metadata: { ...metadata, resourceVersion } };
    },
  };
}

/** The apply-config object as first created: its identity and the set's labels and annotations. */
function newParentBody(spec: ApplySetParent, metadata: ParentMetadata): JsonObject {
  return {
    apiVersion: spec.group === '' ? spec.version : `${spec.group}/${spec.version}`,
    kind: spec.kind,
    metadata: {
      name: spec.name,
      ...(spec.namespace === '' ? {} : { namespace: spec.namespace }),
      ...(spec.finalizer === undefined ? {} : { finalizers: [spec.finalizer] }),
      labels: { ...metadata.labels },
      annotations: Object.fromEntries(
        Object.entries(metadata.annotations).filter((entry): entry is [string, string] => entry[1] !== null),
      ),
    },
  };
}

/**
 * `patch` plus the finalizer the parent must hold, when it lacks it. A merge patch replaces the whole
 * list, so it is the live list with ours added; the resourceVersion guard makes it a compare-and-swap.
 */
function withFinalizer(
  patch: JsonObject | undefined,
  live: JsonObject,
  finalizer: string | undefined,
): JsonObject | undefined {
  const metadata = live['metadata'];
  const held = isJsonObject(metadata) && Array.isArray(metadata['finalizers']) ? metadata['finalizers'] : [];
  if (finalizer === undefined || held.includes(finalizer)) return patch;
  const patchMetadata = isJsonObject(patch?.['metadata']) ? patch['metadata'] : {};
  return { ...patch, metadata: { ...patchMetadata, finalizers: [...held, finalizer] } };
}

/**
 * A compare-and-swap on the version this run read and planned on: a replica that lost the leadership
 * while paused, or any other writer in between, turns the patch into a 409, never into a stale
 * inventory merged over a newer one.
 */
function guardedByResourceVersion(patch: JsonObject, live: JsonObject): JsonObject {
  const resourceVersion = liveResourceVersion(live);
  return resourceVersion === undefined
    ? patch
    : { ...patch, metadata: { ...(patch['metadata'] as JsonObject), resourceVersion } };
}

function liveAnnotations(live: JsonObject | undefined): Record<string, string> {
  const metadata = live?.['metadata'];
  const annotations = isJsonObject(metadata) ? metadata['annotations'] : undefined;
  if (!isJsonObject(annotations)) return {};
  return Object.fromEntries(
    Object.entries(annotations).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
