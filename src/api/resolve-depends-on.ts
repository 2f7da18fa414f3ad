/**
 * `spec.dependsOn` read into its two kinds of entries: ApplySets (no apiVersion and kind, or the
 * ApplySet's own), which wait for Ready at their generation and wake their dependents, and any other
 * object, read as the ApplySet's account and waited for until Current.
 */
import { compileCelPredicate } from '../health/cel-expression.js';
import { APPLYSET_API_VERSION, APPLYSET_KIND } from './applyset-types.js';
import type { DependencyReference, ObjectDependency } from './dependency-types.js';
import { DNS1123_SUBDOMAIN, isNamespaceName, isRecord, readString, type SpecFail } from './spec-fields.js';

/**
 * The CRD's CEL rule on each entry says the same.
 * @internal The CRD test holds the rule's message to it.
 */
export const API_VERSION_AND_KIND_TOGETHER = 'apiVersion and kind must be given together';

/** An ApplySet is ready when Ready at its generation: a CEL `ready` says nothing of it. */
const READY_FOR_OBJECTS_ONLY = 'is for objects other than ApplySets (an ApplySet is waited for until Ready)';

export interface ResolvedDependsOn {
  readonly dependsOn: DependencyReference[];
  readonly dependsOnObjects: ObjectDependency[];
}

export function resolveDependsOn(raw: unknown, fail: SpecFail): ResolvedDependsOn {
  const resolved: ResolvedDependsOn = { dependsOn: [], dependsOnObjects: [] };
  if (raw === undefined) return resolved;
  if (!Array.isArray(raw)) {
    fail('spec.dependsOn', 'must be a list');
    return resolved;
  }
  raw.forEach((entry: unknown, index) => {
    const field = `spec.dependsOn[${index}]`;
    if (!isRecord(entry)) return fail(field, 'must be an object');
    const name = readString(entry, 'name', `${field}.name`, fail, { required: true });
    const namespace = readString(entry, 'namespace', `${field}.namespace`, fail);
    const apiVersion = readString(entry, 'apiVersion', `${field}.apiVersion`, fail);
    const kind = readString(entry, 'kind', `${field}.kind`, fail);
    const ready = readString(entry, 'ready', `${field}.ready`, fail);
    const namesObject = apiVersion !== undefined && kind !== undefined && !isApplySet(apiVersion, kind);
    const nameProblem = name === undefined ? undefined : objectNameProblem(name, namesObject);
    if (nameProblem !== undefined) return fail(`${field}.name`, nameProblem);
    if (namespace !== undefined && !isNamespaceName(namespace))
      return fail(`${field}.namespace`, 'must be a DNS-1123 label');
    if ((apiVersion === undefined) !== (kind === undefined))
      return fail(field, API_VERSION_AND_KIND_TOGETHER);
    if (apiVersion === '' || kind === '') return fail(field, 'apiVersion and kind must not be empty');
    if (name === undefined) return undefined;
    const reference = namespace === undefined ? { name } : { name, namespace };
    if (apiVersion === undefined || kind === undefined || isApplySet(apiVersion, kind)) {
      if (ready !== undefined) return fail(`${field}.ready`, READY_FOR_OBJECTS_ONLY);
      resolved.dependsOn.push(reference);
      return undefined;
    }
    if (ready === undefined) resolved.dependsOnObjects.push({ apiVersion, kind, ...reference });
    else {
      const compiled = compileCelPredicate(ready);
      if ('error' in compiled) return fail(`${field}.ready`, `(${apiVersion} ${kind}) ${compiled.error}`);
      resolved.dependsOnObjects.push({ apiVersion, kind, ...reference, ready });
    }
    return undefined;
  });
  return resolved;
}

/**
 * An ApplySet's name is a DNS-1123 subdomain; another kind's may be any name the API server takes in a
 * path (a ClusterRole's `system:aggregate-to-edit`): not `.` nor `..`, no `/` nor `%`.
 */
function objectNameProblem(name: string, namesObject: boolean): string | undefined {
  if (!namesObject) {
    return DNS1123_SUBDOMAIN.test(name) && name.length <= 253 ? undefined : 'must be a DNS-1123 subdomain';
  }
  if (name === '' || name.length > 253) return 'must be 1 to 253 characters';
  if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) {
    return 'cannot be "." or "..", nor contain "/" or "%"';
  }
  return undefined;
}

function isApplySet(apiVersion: string, kind: string): boolean {
  return apiVersion === APPLYSET_API_VERSION && kind === APPLYSET_KIND;
}
