/**
 * A GitHub App in a credentials Secret, under the keys Flux's GitRepository reads with `provider:
 * github` (`githubAppID`, `githubAppInstallationID`, `githubAppPrivateKey`, `githubAppBaseURL`), plus
 * `githubAppInstallationOwner` to look the installation up by the organisation or user it is installed
 * on. Pure: the Secret's data in, the app (or what it lacks) out.
 */

/** The Secret keys, by what they hold. */
export const GITHUB_APP_KEYS = {
  appId: 'githubAppID',
  installationId: 'githubAppInstallationID',
  installationOwner: 'githubAppInstallationOwner',
  privateKey: 'githubAppPrivateKey',
  baseUrl: 'githubAppBaseURL',
} as const;

/** github.com's API; GitHub Enterprise Server's is `https://<host>/api/v3`. */
const DEFAULT_GITHUB_API_BASE = 'https://api.github.com';

/** The installation: its id, or the organisation or user to look it up on. */
type GitHubAppInstallation = { readonly id: string } | { readonly owner: string };

export interface GitHubApp {
  /** The app id (or its client id): the JWT's `iss`. */
  readonly appId: string;
  readonly installation: GitHubAppInstallation;
  /** The PEM private key, as GitHub gives it for download. */
  readonly privateKey: string;
  /** The REST API's base, without a trailing slash. */
  readonly baseUrl: string;
  /** What the app came from, for messages: `Secret ns/name`. */
  readonly from: string;
}

/**
 * The app a Secret's data holds; undefined when it holds no `githubAppID` (other credentials, then);
 * a problem, phrased to follow "Secret ns/name", when it holds one but not the rest.
 */
export function githubAppOf(
  data: Readonly<Record<string, string>>,
  from: string,
): { readonly app: GitHubApp } | { readonly problem: string } | undefined {
  const field = (key: string) => {
    const value = data[key]?.trim();
    return value === '' ? undefined : value;
  };
  const appId = field(GITHUB_APP_KEYS.appId);
  if (appId === undefined) return undefined;
  if (/\s/.test(appId)) return { problem: `has a ${GITHUB_APP_KEYS.appId} with white space in it` };
  const privateKey = field(GITHUB_APP_KEYS.privateKey);
  if (privateKey === undefined) {
    return { problem: `has a ${GITHUB_APP_KEYS.appId} but no ${GITHUB_APP_KEYS.privateKey}` };
  }
  const installation = installationOf(
    field(GITHUB_APP_KEYS.installationId),
    field(GITHUB_APP_KEYS.installationOwner),
  );
  if ('problem' in installation) return installation;
  const baseUrl = (field(GITHUB_APP_KEYS.baseUrl) ?? DEFAULT_GITHUB_API_BASE).replace(/\/+$/, '');
  if (!isHttpUrl(baseUrl)) return { problem: `has a ${GITHUB_APP_KEYS.baseUrl} that is no http(s) URL` };
  return { app: { appId, installation: installation.installation, privateKey, baseUrl, from } };
}

function installationOf(
  id: string | undefined,
  owner: string | undefined,
): { readonly installation: GitHubAppInstallation } | { readonly problem: string } {
  if (id !== undefined) {
    if (!/^\d+$/.test(id)) return { problem: `has a ${GITHUB_APP_KEYS.installationId} that is not a number` };
    return { installation: { id } };
  }
  if (owner === undefined) {
    return {
      problem: `has a ${GITHUB_APP_KEYS.appId} but neither ${GITHUB_APP_KEYS.installationId} nor ${GITHUB_APP_KEYS.installationOwner}`,
    };
  }
  // GitHub's logins: letters, digits and single hyphens; anything else could not name an owner.
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,98})$/.test(owner)) {
    return { problem: `has a ${GITHUB_APP_KEYS.installationOwner} that is no GitHub login` };
  }
  return { installation: { owner } };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === ''
    );
  } catch {
    // Not a URL at all: the caller says so.
    return false;
  }
}
