/**
 * An OCI artifact's address as an ApplySet names it: `oci://host[:port]/repository`, as Flux's
 * OCIRepository and `flux push artifact` write it. Pure: the names are checked as the distribution
 * spec defines them, so a request is never built from a path a registry would read otherwise.
 */

export interface OciRepository {
  /** `host` or `host:port`, as in the URL. */
  readonly host: string;
  /** `team/app-manifests`: lowercase path components. */
  readonly repository: string;
}

/** The distribution spec's tag. */
export const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/** The one digest an OCI source is pinned to: sha256, 64 lowercase hex digits. */
export const OCI_DIGEST = /^sha256:[a-f0-9]{64}$/;

/** The distribution spec's repository name: components of [a-z0-9] joined by `.`, `_`, `__` or `-`s. */
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;

/** `oci://ghcr.io/team/app` → its host and repository; a message naming what is wrong otherwise. */
export function parseOciUrl(text: string): OciRepository | { readonly problem: string } {
  if (!text.startsWith('oci://')) return { problem: `must start with oci:// (got ${JSON.stringify(text)})` };
  const rest = text.slice('oci://'.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return { problem: 'must name a host and a repository: oci://HOST/REPOSITORY' };
  const host = rest.slice(0, slash).toLowerCase();
  const repository = rest.slice(slash + 1);
  let parsed: URL;
  try {
    parsed = new URL(`https://${host}/`);
  } catch {
    return { problem: `${JSON.stringify(host)} is not a host` };
  }
  if (parsed.host !== host || parsed.username !== '' || host.includes('@')) {
    return { problem: `${JSON.stringify(host)} is not a host[:port]` };
  }
  if (repository.length > 255 || !repository.split('/').every((part) => COMPONENT.test(part))) {
    return {
      problem: `${JSON.stringify(repository)} is not a repository name (lowercase letters, digits and . _ - between them, / between components; no tag or digest in the URL: use ref)`,
    };
  }
  return { host, repository };
}
