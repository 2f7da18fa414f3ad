import { decodeManifestFiles, type ManifestEntry } from './decode-manifest-files.js';
import { hasHookAnnotation } from './hook-annotation-keys.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value.js';
import { ManifestError, describeManifestSource, type ManifestSource } from './manifest-error.js';
import { manifestLimits, type ManifestFile, type ManifestLimits } from './manifest-limits.js';
import type { ManifestObject } from './manifest-object.js';
import { describeObjectRef, objectRefKey, parseApiVersion, type ObjectRef } from './object-ref.js';
import type { Scope, ScopeResolver } from './scope-resolver.js';

// The controller still imports ManifestFile from here; it belongs to manifest-limits.ts, whose read
// budget makes the refused ones.
export type { ManifestFile } from './manifest-limits.js';

export interface ParseManifestOptions {
  /** Filled into namespaced objects that name none (kubectl's `-n`, or the context's namespace). */
  readonly defaultNamespace: string;
  /**
   * When the namespace was given explicitly (`-n`), an object naming another namespace is refused,
   * as kubectl refuses it ("the namespace from the provided object does not match").
   */
  readonly enforceNamespace?: boolean;
  readonly scopes: ScopeResolver;
  /** Size limits; the defaults of `DEFAULT_MANIFEST_LIMITS` where not given. */
  readonly limits?: Partial<ManifestLimits>;
  /**
   * When the run splits hooks out (the controller): a hook is created, not applied, so an object
   * annotated as one may name itself with `metadata.generateName`, as Argo CD's and Helm's hooks
   * often do. Without it, generateName is refused as kubectl apply refuses it.
   */
  readonly generateNameHooks?: boolean;
}

/** What validating decoded entries takes: the options but the size limits, which bound the decoding. */
type EntryOptions = Omit<ParseManifestOptions, 'limits'>;

export type ParseManifestResult =
  | { readonly ok: true; readonly objects: readonly ManifestObject[] }
  | { readonly ok: false; readonly errors: readonly ManifestError[] };

const CRD_GROUP = 'apiextensions.k8s.io';
const CRD_KIND = 'CustomResourceDefinition';

/**
 * Turns the files of a manifest directory into the validated objects of one set, or into the list
 * of ALL problems found (bad input must mean no write at all, and one run should show every file to
 * fix).
 *
 * Scope comes from `options.scopes` (the cluster's discovery), then from the CustomResourceDefinitions
 * of the set itself: a set that ships a CRD and instances of it must load before that CRD exists on
 * the cluster. Validation therefore happens in one phase, after mapping.
 */
export function parseManifestSet(
  files: readonly ManifestFile[],
  options: ParseManifestOptions,
): ParseManifestResult {
  return parseManifestEntries(decodeManifestFiles(files, manifestLimits(options.limits)), options);
}

/**
 * parseManifestSet on files already decoded (decodeManifestFiles, within `options.limits`): a caller
 * that validates the same files twice (against the kinds it knows, then against discovery) decodes
 * their YAML once. The entries are read, never changed.
 */
export function parseManifestEntries(
  entries: readonly ManifestEntry[],
  options: EntryOptions,
): ParseManifestResult {
  const scopes = withSetCrds(options.scopes, entries);
  const errors: ManifestError[] = [];
  const objects: ManifestObject[] = [];
  const firstSeen = new Map<string, ManifestSource>();

  for (const entry of entries) {
    if (entry.type === 'error') {
      errors.push(entry.error);
      continue;
    }
    const result = validateObject(entry.value, entry.source, options, scopes);
    if (!Array.isArray(result)) {
      const key = objectRefKey(result.ref);
      const first = firstSeen.get(key);
      if (first === undefined) {
        firstSeen.set(key, entry.source);
        objects.push(result);
      } else {
        errors.push(
          new ManifestError(
            'duplicate-object',
            entry.source,
            describeObjectRef(result.ref),
            `the same object is already declared in ${describeManifestSource(first)}`,
          ),
        );
      }
    } else {
      errors.push(...result);
    }
  }
  return errors.length === 0 ? { ok: true, objects } : { ok: false, errors };
}

/** The fields that say which object a document is, once each was checked to be there and well-formed. */
interface ObjectIdentity {
  readonly groupVersion: { readonly group: string; readonly version: string };
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly metadata: JsonObject;
  /** `metadata.namespace` as written, '' when absent. */
  readonly declaredNamespace: string;
  /** What we know of the object, for messages (`describePartial`). */
  readonly label: string | undefined;
  /** A hook named by `metadata.generateName`: `name` is that prefix (`generateNameHooks`). */
  readonly generateName?: true;
}

function validateObject(
  value: JsonObject,
  source: ManifestSource,
  options: EntryOptions,
  scopes: ScopeResolver,
): ManifestObject | ManifestError[] {
  const identity = readObjectIdentity(value, source, options.generateNameHooks === true);
  if (Array.isArray(identity)) return identity;
  const placed = placeObject(value, source, identity, options, scopes);
  return identity.generateName === true && !Array.isArray(placed)
    ? { ...placed, generateName: true }
    : placed;
}

/** apiVersion, kind and metadata.name checked, every problem of the document reported at once. */
function readObjectIdentity(
  value: JsonObject,
  source: ManifestSource,
  generateNameHooks: boolean,
): ObjectIdentity | ManifestError[] {
  const errors: ManifestError[] = [];
  const metadata = value['metadata'];
  const generated = generatedHookName(metadata, generateNameHooks);
  const name = generated ?? (isJsonObject(metadata) ? metadata['name'] : undefined);
  const namespaceValue = isJsonObject(metadata) ? metadata['namespace'] : undefined;
  const apiVersion = value['apiVersion'];
  const kind = value['kind'];
  const label = describePartial(kind, name, namespaceValue);
  const fail = (code: 'missing-field' | 'invalid-field', detail: string) =>
    errors.push(new ManifestError(code, source, label, detail));

  const groupVersion = typeof apiVersion === 'string' ? parseApiVersion(apiVersion) : undefined;
  if (apiVersion === undefined || apiVersion === null || apiVersion === '') {
    fail('missing-field', 'apiVersion is required');
  } else if (groupVersion === undefined) {
    fail(
      'invalid-field',
      `apiVersion must be "version" or "group/version", got ${JSON.stringify(apiVersion)}`,
    );
  }
  if (kind === undefined || kind === null || kind === '') {
    fail('missing-field', 'kind is required');
  } else if (typeof kind !== 'string') {
    fail('invalid-field', `kind must be a string, got ${JSON.stringify(kind)}`);
  }
  if (metadata === undefined || metadata === null) {
    fail('missing-field', 'metadata.name is required');
  } else if (!isJsonObject(metadata)) {
    fail('invalid-field', 'metadata must be an object');
  } else if ((name === undefined || name === null || name === '') && hasText(metadata['generateName'])) {
    // kubectl apply has no generateName path: every object needs a name to be found again, and
    // kubectl says so ("cannot use generate name with apply") rather than that the name is missing.
    fail(
      'invalid-field',
      `apply cannot use generateName (${JSON.stringify(metadata['generateName'])}), as kubectl apply cannot: set metadata.name`,
    );
  } else if (name === undefined || name === null || name === '') {
    fail('missing-field', 'metadata.name is required');
  } else if (typeof name !== 'string') {
    fail('invalid-field', `metadata.name must be a string, got ${JSON.stringify(name)}`);
  }
  if (namespaceValue !== undefined && namespaceValue !== null && typeof namespaceValue !== 'string') {
    fail('invalid-field', `metadata.namespace must be a string, got ${JSON.stringify(namespaceValue)}`);
  }
  if (
    errors.length > 0 ||
    groupVersion === undefined ||
    typeof kind !== 'string' ||
    typeof name !== 'string' ||
    !isJsonObject(metadata)
  ) {
    return errors;
  }
  const declaredNamespace = typeof namespaceValue === 'string' ? namespaceValue : '';
  const identity = {
    groupVersion,
    apiVersion: apiVersion as string,
    kind,
    name,
    metadata,
    declaredNamespace,
    label,
  };
  return generated === undefined ? identity : { ...identity, generateName: true };
}

/** A hook's `metadata.generateName`, when it has no name and hooks may use one (`generateNameHooks`). */
function generatedHookName(metadata: JsonValue | undefined, generateNameHooks: boolean): string | undefined {
  if (!generateNameHooks || !isJsonObject(metadata) || hasText(metadata['name'])) return undefined;
  const prefix = metadata['generateName'];
  return hasText(prefix) && hasHookAnnotation(metadata) ? prefix : undefined;
}

/** The object's scope from discovery (or the set's CRDs), and its namespace: declared or the default. */
function placeObject(
  value: JsonObject,
  source: ManifestSource,
  identity: ObjectIdentity,
  options: EntryOptions,
  scopes: ScopeResolver,
): ManifestObject | ManifestError[] {
  const { groupVersion, apiVersion, kind, name, metadata, declaredNamespace: declared, label } = identity;
  const gvk = { group: groupVersion.group, version: groupVersion.version, kind };
  const scope = scopes.scopeOf(gvk);
  if (scope === undefined) {
    return [
      new ManifestError(
        'unknown-kind',
        source,
        label,
        `the server has no kind "${kind}" in version "${apiVersion}" and the set defines no such CustomResourceDefinition`,
      ),
    ];
  }

  if (scope === 'Cluster') {
    if (declared !== '') {
      return [
        new ManifestError(
          'namespace-on-cluster-scoped',
          source,
          label,
          `${kind} is cluster-scoped and cannot have metadata.namespace ("${declared}")`,
        ),
      ];
    }
    return finish(value, source, gvk, apiVersion, name, '', scope);
  }

  if (options.enforceNamespace === true && declared !== '' && declared !== options.defaultNamespace) {
    return [
      new ManifestError(
        'namespace-mismatch',
        source,
        label,
        `the object's namespace "${declared}" does not match the namespace "${options.defaultNamespace}" given`,
      ),
    ];
  }
  const namespace = declared === '' ? options.defaultNamespace : declared;
  const manifest = declared === namespace ? value : { ...value, metadata: { ...metadata, namespace } };
  return finish(manifest, source, gvk, apiVersion, name, namespace, scope);
}

function finish(
  manifest: JsonObject,
  source: ManifestSource,
  gvk: { group: string; version: string; kind: string },
  apiVersion: string,
  name: string,
  namespace: string,
  scope: Scope,
): ManifestObject {
  const ref: ObjectRef = { group: gvk.group, kind: gvk.kind, namespace, name };
  return { ref, apiVersion, version: gvk.version, scope, manifest, source };
}

function hasText(value: JsonValue | undefined): value is string {
  return typeof value === 'string' && value !== '';
}

function describePartial(
  kind: JsonValue | undefined,
  name: JsonValue | undefined,
  namespace: JsonValue | undefined,
) {
  if (typeof kind !== 'string' && typeof name !== 'string') return undefined;
  const type = typeof kind === 'string' && kind !== '' ? kind.toLowerCase() : '<no kind>';
  const objectName = typeof name === 'string' && name !== '' ? name : '<no name>';
  return typeof namespace === 'string' && namespace !== ''
    ? `${type}/${objectName} -n ${namespace}`
    : `${type}/${objectName}`;
}

/**
 * Adds the set's own CRDs to the cluster's answer, so a custom resource whose CRD is applied in the
 * first wave is known before that CRD exists. The cluster wins where both know the kind: the scope
 * of an existing CRD cannot change.
 */
function withSetCrds(cluster: ScopeResolver, entries: readonly ManifestEntry[]): ScopeResolver {
  const local = new Map<string, Scope>();
  for (const entry of entries) {
    if (entry.type !== 'object') continue;
    const apiVersion = entry.value['apiVersion'];
    const groupVersion = typeof apiVersion === 'string' ? parseApiVersion(apiVersion) : undefined;
    if (groupVersion?.group !== CRD_GROUP || entry.value['kind'] !== CRD_KIND) continue;
    const spec = entry.value['spec'];
    if (!isJsonObject(spec)) continue;
    const group = spec['group'];
    const names = spec['names'];
    const kind = isJsonObject(names) ? names['kind'] : undefined;
    const scope = spec['scope'];
    if (
      typeof group === 'string' &&
      typeof kind === 'string' &&
      (scope === 'Namespaced' || scope === 'Cluster')
    ) {
      local.set(`${group}/${kind}`, scope);
    }
  }
  return {
    scopeOf: (gvk) => cluster.scopeOf(gvk) ?? local.get(`${gvk.group}/${gvk.kind}`),
  };
}
