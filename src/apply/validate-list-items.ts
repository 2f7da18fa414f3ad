import { describeManifestSource } from '../manifests/manifest-error.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import type { PatchMetaSource } from '../kube/openapi-patch-meta-source.js';
import {
  describeListItemProblem,
  findListItemProblems,
  schemaNameOf,
} from '../plan/find-list-item-problems.js';
import type { ApplySetRequest } from './apply-set-contract.js';
import { ApplySetInputRejectedError } from './apply-set-input-error.js';

/**
 * kubectl's client-side validation of `kind: List` items under `--validate=strict` (the default): an
 * item with a field its kind's schema lacks, a required field missing, a value of the wrong type, or
 * a null as a map value or list item, refuses the whole set before anything is written, as kubectl
 * refuses the whole file (`error validating data: ValidationError(LimitRange.spec): missing required
 * field "limits" in io.k8s.api.core.v1.LimitRangeSpec`). Objects outside a List need none of this:
 * the server validates them itself (`fieldValidation=Strict`), and takes what it takes. A kind whose group-version has no
 * OpenAPI v3 document is not checked here; the server still refuses the item when it is written.
 */
export async function refuseInvalidListItems(
  desired: readonly ManifestObject[],
  request: Pick<ApplySetRequest, 'write' | 'signal'>,
  source: PatchMetaSource,
): Promise<void> {
  if ((request.write.fieldValidation ?? 'strict') !== 'strict' || source.schemaDocumentFor === undefined)
    return;
  const problems: string[] = [];
  for (const object of desired) {
    if (object.source.itemIndex === undefined) continue;
    const gvk = { group: object.ref.group, version: object.version, kind: object.ref.kind };
    const document = await source.schemaDocumentFor(gvk, request.signal);
    const rootName = document === undefined ? undefined : schemaNameOf(document, gvk);
    if (document === undefined || rootName === undefined) continue;
    // kubectl checks a typed list (LimitRangeList) whole against its own schema, so it names an item's
    // place from the list: `LimitRangeList.items[0].spec`; the items of a `kind: List` one by one.
    const { listKind, itemIndex } = object.source;
    const at = listKind === undefined ? gvk.kind : `${listKind}.items[${itemIndex}]`;
    const found = findListItemProblems(document, rootName, object.manifest, at);
    if (found.length === 0) continue;
    const lines = found.map(describeListItemProblem).join('; ');
    problems.push(
      `${describeManifestSource(object.source)}: error validating data: ${lines} (kubectl validates the ` +
        `items of a List before sending and refuses the file)`,
    );
  }
  if (problems.length > 0) throw new ApplySetInputRejectedError(problems);
}
