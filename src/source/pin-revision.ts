/**
 * A spec whose source is pinned to a revision the status recorded, so a later read gets exactly what
 * was applied then, wherever the ref has moved since: a Git revision (`main@sha1:<sha>`) read as its
 * commit, an OCI one (`v1@sha256:<digest>`) as its manifest digest, a chart of a Helm repository
 * (`web@1.2.0@sha256:<digest>`) as its exact version. Pure. The ApplySet's deletion reads the revision
 * it last applied this way, for its PreDelete hooks (docs/hooks.md).
 */
import type { ResolvedApplySetSpec, ResolvedSourceRef } from '../api/applyset-types.js';
import { parseRevision } from '../git/git-ref.js';

/** The spec reading `revision`, or why the revision cannot be read back for this source. */
export function pinRevision(
  spec: ResolvedApplySetSpec,
  revision: string,
): { readonly spec: ResolvedApplySetSpec } | { readonly problem: string } {
  const ref = pinnedRef(spec.source.kind, revision);
  if (ref === undefined) {
    return {
      problem: `revision ${revision} is not one a ${spec.source.kind} source (${spec.source.url}) records`,
    };
  }
  return { spec: { ...spec, source: { ...spec.source, ref } } };
}

function pinnedRef(
  kind: ResolvedApplySetSpec['source']['kind'],
  revision: string,
): ResolvedSourceRef | undefined {
  switch (kind) {
    case 'git': {
      const parsed = parseRevision(revision);
      return parsed === undefined ? undefined : { type: 'commit', sha: parsed.commit };
    }
    case 'oci': {
      const digest = /(?:^|@)(sha256:[a-f0-9]{64})$/.exec(revision)?.[1];
      return digest === undefined ? undefined : { type: 'digest', digest };
    }
    case 'helm': {
      const version = /^[^@]+@([^@]+)@sha256:[a-f0-9]{64}$/.exec(revision)?.[1];
      return version === undefined ? undefined : { type: 'semver', range: version };
    }
  }
}
