import type { ApplySet } from '../api/applyset-types.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { JsonObject } from '../manifests/json-value.js';

/** One core/v1 Event about an ApplySet, as the web view shows it. */
export interface UiEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  /** RFC 3339: the event's last occurrence. */
  readonly time: string;
  readonly count: number;
}

/** What changed, so that open pages showing it can refresh: one ApplySet, or its events. */
export interface UiChange {
  readonly namespace: string;
  readonly name: string;
}

/** One object of a set, named as the inventory names it (no version). */
export interface UiObjectRef {
  readonly namespace: string;
  readonly name: string;
  readonly group: string;
  readonly kind: string;
}

/**
 * Reads one live object of an ApplySet, undefined when it does not exist. The caller decides as whom:
 * the local view reads as its user, the controller's view as the ApplySet's own ServiceAccount, so a
 * page never shows an object its ApplySet could not see.
 */
export type UiObjectReader = (ref: UiObjectRef, signal?: AbortSignal) => Promise<JsonObject | undefined>;

/** What the next run would change, computed on demand for the ApplySet page. */
export type UiPreview =
  | { readonly kind: 'changes'; readonly summary: string; readonly diff: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

/**
 * Where the web view's data comes from: a watch of its own for `applyset ui`, the controller's informer
 * cache in the cluster. It returns everything it sees; the server filters by the viewer's namespaces.
 */
export interface UiData {
  /** Every ApplySet known, from memory: the fleet page is rendered from this without a request. */
  applySets(): readonly ApplySet[];
  applySet(namespace: string, name: string): ApplySet | undefined;
  /** The ApplySet's recent events, newest first. */
  events(namespace: string, name: string): readonly UiEvent[];
  /** Calls `listener` on every change; returns the function that stops it. */
  subscribe(listener: (change: UiChange) => void): () => void;
  /** The reader of this ApplySet's live objects (see UiObjectReader). */
  readerFor(applySet: ApplySet): UiObjectReader;
  /**
   * The client the logs of the set's failed hook Jobs are read through (hook-job-logs.ts): on the cluster
   * and as the account its objects are read as (readerFor); or, in words, why this view reads none.
   */
  hookLogClientFor?(applySet: ApplySet): KubeClient | string;
  /** Why the ApplySets cannot be shown yet (the list is refused, the CRD is missing), if so. */
  problem?(): string | undefined;
  /** What the next run would change; absent where this view cannot compute it. */
  preview?(applySet: ApplySet, signal: AbortSignal): Promise<UiPreview>;
}

/** An object of the set with its health by the project's kstatus rules (src/health/). */
export interface UiObjectState extends UiObjectRef {
  readonly health: string;
  readonly message: string;
}
