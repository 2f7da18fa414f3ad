import { html, type SafeHtml } from './html.js';
import { UI_CSS_PATH, UI_SCRIPT_PATH } from './ui-assets.js';

export interface PageFrame {
  readonly title: string;
  /** Who is looking, shown in the header; undefined on the sign-in page. */
  readonly viewerName?: string;
  /** Whether to offer signing out (the view was started with sign-in). */
  readonly signOut: boolean;
  /** What the live-update script refreshes on: `*` for any ApplySet, `namespace/name` for one. */
  readonly watch?: string;
  readonly body: SafeHtml;
}

/**
 * The frame of every page: one stylesheet and one deferred script from /assets (the Content-Security-
 * Policy allows nothing inline), a skip link to the content, and a polite live region where the script
 * says what it refreshed.
 */
export function renderPage(frame: PageFrame): string {
  return (
    '<!doctype html>\n' +
    html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · applyset</title>
<link rel="stylesheet" href="${UI_CSS_PATH}">
<script src="${UI_SCRIPT_PATH}" defer></script>
</head>
<body${frame.watch === undefined ? '' : html` data-watch="${frame.watch}"`}>
<a class="skip" href="#content">Skip to content</a>
<header class="top">
<nav aria-label="Main"><a href="/">ApplySets</a></nav>
${
  frame.viewerName === undefined
    ? ''
    : html`<p class="who">
        Signed in as <strong>${frame.viewerName}</strong>${frame.signOut
          ? html` <form method="post" action="/sign-out" class="inline">
              <button type="submit">Sign out</button>
            </form>`
          : ''}
      </p>`
}
</header>
<main id="content" tabindex="-1">
${frame.body}
</main>
<p id="live" class="live" role="status" aria-live="polite"></p>
</body>
</html>
`.text
  );
}

/** A refusal or a missing page, in the same frame. */
export function renderMessagePage(title: string, message: string, extra?: SafeHtml): string {
  return renderPage({
    title,
    signOut: false,
    body: html`<h1>${title}</h1>
      <p>${message}</p>
      ${extra}`,
  });
}

/** The sign-in form: a bearer token, posted to /sign-in and kept in an HttpOnly cookie. */
export function signInForm(): SafeHtml {
  return html`<form method="post" action="/sign-in" class="sign-in">
    <label for="token">Bearer token</label>
    <input id="token" name="token" type="password" autocomplete="off" required />
    <p class="hint">
      A token of your own, e.g. from <code>kubectl create token</code>: you see the namespaces it may read.
    </p>
    <button type="submit">Sign in</button>
  </form>`;
}
