import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { KubeApiError } from './kube-api-error.js';
import type { KubeClient, KubeRequest } from './kube-client.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/** Where one resource lives: what a REST mapping gives for a kind, plus the namespace. */
export interface ResourceLocation {
  readonly group: string;
  readonly version: string;
  /** Plural resource name, e.g. `deployments`. */
  readonly resource: string;
  /** '' for cluster-scoped resources (and for a LIST across all namespaces). */
  readonly namespace: string;
}

export type PatchContentType =
  | 'application/strategic-merge-patch+json'
  | 'application/merge-patch+json'
  /** Server-side apply (the body is JSON, which is YAML). */
  | 'application/apply-patch+yaml';

type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

/**
 * kubectl's write options: `fieldManager` names who wrote the fields (kubectl's client-side apply
 * records `kubectl-client-side-apply`, which its server-side upgrade looks for), `fieldValidation`
 * makes the server refuse (Strict) or warn about (Warn) unknown and duplicate fields.
 */
export interface WriteOptions {
  readonly fieldManager?: string;
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Server-side apply only: take the fields other managers own (`force=true`). */
  readonly force?: boolean;
  /** Have the server compute the write and keep nothing (`dryRun=All`): the preview of a server-side apply. */
  readonly dryRun?: boolean;
  readonly onWarning?: (warning: string) => void;
}

/** The verbs the engine needs, on top of the raw client. Every call takes an AbortSignal. */
export interface KubeObjectApi {
  /** The object, or `undefined` on 404. Any other failure rejects: a failed read is not "absent". */
  get(location: ResourceLocation, name: string, signal?: AbortSignal): Promise<JsonObject | undefined>;
  /**
   * The items of a LIST, each with `apiVersion` and `kind` filled in as a GET would return them; only
   * those matching `labelSelector` when one is given.
   */
  list(
    location: ResourceLocation,
    kind: string,
    signal?: AbortSignal,
    options?: { readonly labelSelector?: string },
  ): Promise<JsonObject[]>;
  create(
    location: ResourceLocation,
    body: JsonObject,
    signal?: AbortSignal,
    options?: WriteOptions,
  ): Promise<JsonObject>;
  patch(
    location: ResourceLocation,
    name: string,
    contentType: PatchContentType,
    body: string,
    signal?: AbortSignal,
    options?: WriteOptions,
  ): Promise<JsonObject>;
  /** Deletes with a propagation policy and, when given, a uid precondition. */
  delete(
    location: ResourceLocation,
    name: string,
    options: { propagationPolicy: PropagationPolicy; uid?: string },
    signal?: AbortSignal,
  ): Promise<void>;
}

export function resourcePath(location: ResourceLocation, name?: string): string {
  const root =
    location.group === '' ? `/api/${location.version}` : `/apis/${location.group}/${location.version}`;
  const namespaced = location.namespace === '' ? '' : `/namespaces/${encodeURIComponent(location.namespace)}`;
  const item = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${root}${namespaced}/${location.resource}${item}`;
}

export function createKubeObjectApi(client: KubeClient): KubeObjectApi {
  const asObject = (value: unknown, what: string): JsonObject => {
    if (!isJsonObject(value))
      throw new Error(`${what}: the API server answered with something not an object`);
    return value;
  };
  return {
    async get(location, name, signal) {
      const path = resourcePath(location, name);
      try {
        return asObject(await client.request({ method: 'GET', path, signal }), `GET ${path}`);
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound) return undefined;
        throw error;
      }
    },
    async list(location, kind, signal, options) {
      const path = resourcePath(location);
      const selector = options?.labelSelector;
      const query = selector === undefined ? {} : { query: { labelSelector: selector } };
      const list = asObject(await client.request({ method: 'GET', path, signal, ...query }), `GET ${path}`);
      const items = Array.isArray(list['items']) ? list['items'] : [];
      const apiVersion = location.group === '' ? location.version : `${location.group}/${location.version}`;
      // LIST items carry no apiVersion/kind; the three-way merge must see the object a GET returns.
      return items.filter(isJsonObject).map((item) => ({ apiVersion, kind, ...item }));
    },
    async create(location, body, signal, options) {
      const path = resourcePath(location);
      return asObject(
        await client.request({
          method: 'POST',
          path,
          body: stringifyJson(body),
          ...writeRequestOptions(options),
          ...(signal === undefined ? {} : { signal }),
        }),
        `POST ${path}`,
      );
    },
    async patch(location, name, contentType, body, signal, options) {
      const path = resourcePath(location, name);
      return asObject(
        await client.request({
          method: 'PATCH',
          path,
          body,
          contentType,
          ...writeRequestOptions(options),
          ...(signal === undefined ? {} : { signal }),
        }),
        `PATCH ${path}`,
      );
    },
    async delete(location, name, options, signal) {
      const path = resourcePath(location, name);
      const body: JsonObject = {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: options.propagationPolicy,
        ...(options.uid === undefined ? {} : { preconditions: { uid: options.uid } }),
      };
      await client.request({ method: 'DELETE', path, body: stringifyJson(body), signal });
    },
  };
}

function writeRequestOptions(options: WriteOptions | undefined): Pick<KubeRequest, 'query' | 'onWarning'> {
  if (options === undefined) return {};
  const query: Record<string, string> = {};
  if (options.fieldManager !== undefined) query['fieldManager'] = options.fieldManager;
  if (options.fieldValidation !== undefined) query['fieldValidation'] = options.fieldValidation;
  if (options.force === true) query['force'] = 'true';
  if (options.dryRun === true) query['dryRun'] = 'All';
  return { query, ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }) };
}
