/**
 * The steps of reconcile-applyset.ts that the preview (src/preview/preview-applyset.ts) runs too, one
 * function each, so the preview computes what the controller's run would do by the run's own code:
 * the spec check (step 5), the account (7), the fetch and the read of the revision (9 and 10) and the
 * engine's request for it (11).
 */
import type { ApplySet, ResolvedApplySetSpec, ResolveApplySetSpecResult } from '../api/applyset-types.js';
import type { ApplySetRequest } from '../apply/apply-set-contract.js';
import type { GitSource } from '../git/git-source.js';
import { directoryReader } from '../source/directory-reader.js';
import type { OciSource } from '../source/oci/oci-source.js';
import { fetchArtifact } from './oci-step.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import type { Logger } from '../observability/create-logger.js';
import { readRevisionFiles } from './decryption-step.js';
import { appliedBefore, engineRequest } from './engine-step.js';
import { commitReader, fetchRevision, type SourceAuth, type Step } from './fetch-steps.js';

/** Step 5: the spec as the CRD checks it; an invalid one stalls, naming every field. */
export function checkedSpec(resolved: ResolveApplySetSpecResult): Step<ResolvedApplySetSpec> {
  if (resolved.ok) return { value: resolved.spec };
  const problems = resolved.errors.map((e) => `${e.field} ${e.message}`).join('; ');
  return { done: { kind: 'stalled', reason: 'InvalidSpec', message: `invalid spec: ${problems}` } };
}

/** A revision of the repository read for the engine: its files, its name and its commit. */
export interface ReadRevision {
  readonly files: ManifestFile[];
  /** `main@sha1:…`, as the status shows it. */
  readonly revision: string;
  readonly commit: string;
}

/**
 * Steps 9 and 10: the ref fetched into the shared cache (a fetch younger than `maxAgeMs` taken as it
 * is), then the files under spec.source.path at that commit read from the object store, or the
 * kustomization there built, and their sops files decrypted with spec.decryption's Secret, read as
 * `who.reader`.
 */
export async function fetchAndReadRevision(
  ctx: Parameters<typeof fetchRevision>[0] & { readonly log: Pick<Logger, 'debug' | 'warn' | 'error'> },
  {
    gitSource,
    ociSource,
    kustomize,
  }: { readonly gitSource: GitSource; readonly ociSource?: OciSource; readonly kustomize?: KustomizeOptions },
  spec: ResolvedApplySetSpec,
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  { auth, maxAgeMs, signal }: { auth: SourceAuth | undefined; maxAgeMs: number; signal: AbortSignal },
): Promise<Step<ReadRevision>> {
  const read = { signal, log: ctx.log, ...(kustomize === undefined ? {} : { kustomize }) };
  if (spec.source.kind === 'oci') {
    const artifact = await fetchArtifact(ociSource, spec, who, { auth, signal, log: ctx.log });
    if ('done' in artifact) return artifact;
    const { revision, digest } = artifact.value;
    ctx.log.debug({ revision }, 'artifact read');
    const files = await readRevisionFiles(directoryReader(artifact.value.directory), who, spec, {
      ...read,
      revision,
    });
    if ('done' in files) return files;
    return { value: { files: files.value, revision, commit: digest } };
  }
  const fetched = await fetchRevision(ctx, gitSource, spec, { auth, maxAgeMs }, signal);
  if ('done' in fetched) return fetched;
  const { revision, commit } = fetched.value;
  ctx.log.debug({ revision, fetched: fetched.value.fetched }, 'fetched');
  const atCommit = commitReader(gitSource, { url: spec.source.url, commit });
  const files = await readRevisionFiles(atCommit, who, spec, { ...read, revision });
  if ('done' in files) return files;
  return { value: { files: files.value, revision, commit } };
}

/**
 * Step 11's request: what the engine is asked for this revision, and whether the run is steady (the
 * revision and spec were applied in full before, so a change it makes is drift).
 */
export function revisionRequest(
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  files: readonly ManifestFile[],
  { revision, allowNested }: { revision: string | undefined; allowNested: boolean },
  signal: AbortSignal,
): { readonly request: ApplySetRequest; readonly steady: boolean } {
  const steady = revision !== undefined && appliedBefore(applySet, revision);
  const options = { revision: revision ?? '', steady, allowNested };
  return { request: engineRequest(applySet, spec, files, options, signal), steady };
}
