import type { IncomingMessage } from 'node:http';

/** Who is looking, and what they may see: the web view asks this for every request. */
export interface UiViewer {
  /** A name to show ("signed in as …"); never a token. */
  readonly name: string;
  /**
   * Whether this viewer may `get` ApplySets in the namespace, and so see them, their objects and events;
   * given a `name`, whether it may get at least that one (a Role with `resourceNames` grants no more).
   */
  mayRead(namespace: string, name?: string): Promise<boolean>;
}

export type UiAccessDecision =
  | { readonly kind: 'viewer'; readonly viewer: UiViewer }
  | { readonly kind: 'refused'; readonly status: 401 | 403; readonly message: string };

/**
 * Decides each request's viewer: the local view (`applyset ui`) lets its one user through, the view the
 * controller serves checks a bearer token.
 */
export type UiAccess = (request: IncomingMessage) => Promise<UiAccessDecision>;

/** The cookie the sign-in form sets, holding the viewer's bearer token (HttpOnly, SameSite=Strict). */
export const UI_TOKEN_COOKIE = 'applyset-ui-token';
