import { InputRefusedError } from '../errors/input-refused-error.js';
import type { ObjectError } from '../errors/intent-error.js';
import { describeManifestSource } from '../manifests/manifest-error.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import { APPLYSET_GROUP, APPLYSET_KIND } from './applyset-types.js';

/** One ApplySet among a set's manifests, and what its refusal says. */
interface RefusedApplySet {
  readonly ref: ObjectRef;
  readonly message: string;
}

/**
 * An ApplySet's manifests hold an ApplySet. Applied, it would name its own ServiceAccount and source:
 * whoever writes this repository would choose the identity of a sibling (issue #23, finding 3).
 * Stalled: only a change of the manifests, or of the controller's flags, helps.
 * @internal Tests assert the class the refusal throws.
 */
export class NestedApplySetRefusedError extends InputRefusedError {
  override readonly name = 'NestedApplySetRefusedError';
  readonly reason = 'NestedApplySetRefused';
  /** One line per ApplySet found. */
  readonly problems: readonly string[];
  readonly subject = undefined;
  constructor(readonly refused: readonly RefusedApplySet[]) {
    super(refused.map((item) => item.message).join('; '));
    this.problems = refused.map((item) => item.message);
  }

  /** Each ApplySet found, by its inventory key, for `status.errors`. */
  override objectErrors(): readonly ObjectError[] {
    return this.refused.map((item) => ({ object: objectRefKey(item.ref), message: item.message }));
  }
}

/**
 * Throws NestedApplySetRefusedError when any object is an ApplySet (group applyset.dev, any version),
 * before anything is read or written. Kubernetes checks nothing here the controller could rely on: the
 * account's rights on applysets are the operator's to grant, and the grant of nesting is explicit
 * (`--allow-nested-applysets`), so without it no manifest may create or change an ApplySet.
 */
export function refuseNestedApplySets(objects: readonly ManifestObject[]): void {
  const refused = objects
    .filter((object) => object.ref.group === APPLYSET_GROUP && object.ref.kind === APPLYSET_KIND)
    .map((object) => ({
      ref: object.ref,
      message:
        `manifest ${describeManifestSource(object.source)} is an ApplySet ` +
        `(${object.ref.namespace}/${object.ref.name}); an ApplySet's manifests may not create or change ` +
        'ApplySets unless the controller runs with --allow-nested-applysets',
    }));
  if (refused.length > 0) throw new NestedApplySetRefusedError(refused);
}
