import { createHash } from 'node:crypto';

/**
 * The view's only stylesheet and script, served from /assets so the Content-Security-Policy can forbid
 * everything inline. The pages read without the script: it only applies the fleet's filter as one types
 * and refreshes the open page when the server says over server-sent events that what it shows changed.
 */

export const UI_CSS = `:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5360; --bg: #ffffff; --line: #c9d1d9;
  --link: #0a4fa8; --focus: #8a3ffc; --ok: #0d5e2a; --warn: #7a4a00; --bad: #9b1c1c; --off: #3d4451; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, main:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 1; }
.top { display: flex; justify-content: space-between; align-items: center; padding: .5rem 1rem;
  border-bottom: 1px solid var(--line); }
.top nav a { font-weight: 600; text-decoration: none; }
.who { margin: 0; color: var(--muted); }
.inline { display: inline; }
main { padding: 0 1rem 2rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 1.5rem; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem .6rem; align-items: center; margin-bottom: .5rem; }
input, select, button { font: inherit; padding: .2rem .4rem; border: 1px solid var(--muted); border-radius: 3px;
  background: var(--bg); color: var(--fg); }
button { cursor: pointer; }
table { border-collapse: collapse; width: 100%; }
/* A fixed layout is computed from the first row: 1,000 rows lay out, and filter, in one pass. */
table.fleet { table-layout: fixed; }
table.fleet th:nth-child(1) { width: 11%; } table.fleet th:nth-child(2) { width: 11%; }
table.fleet th:nth-child(3) { width: 9rem; } table.fleet th:nth-child(4) { width: 8rem; }
table.fleet th:nth-child(5) { width: 4rem; } table.fleet th:nth-child(6) { width: 14%; }
table.fleet th:nth-child(7) { width: 6rem; } table.fleet th:nth-child(8) { width: 5rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { position: sticky; top: 0; background: #eef1f4; }
tbody th { font-weight: 600; }
.message { overflow-wrap: anywhere; }
.state, .health { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .85rem;
  font-weight: 600; border: 1px solid currentColor; }
.state-ready, .health-current { color: var(--ok); }
.state-progressing, .health-inprogress, .state-unknown { color: var(--warn); }
.state-stalled, .state-failing, .health-failed, .health-notfound { color: var(--bad); }
.state-suspended, .health-terminating { color: var(--off); }
.count, .crumbs, .hint { color: var(--muted); }
.problem { color: var(--bad); font-weight: 600; }
.tree, .tree ul, .graph, .graph ul { list-style: none; padding-left: 1.2rem; }
.tree > li, .graph > li { padding-left: 0; }
.ns, .kind { font-weight: 600; }
/* The preview and hook logs wrap their long lines (a changed annotation, an error): the page never
   scrolls sideways. */
.diff, .log { background: #f6f8fa; border: 1px solid var(--line); padding: .5rem; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
.facts dt { font-weight: 600; } .facts dd { margin: 0; }
.live { position: fixed; bottom: 0; right: 0; margin: 0; padding: .2rem .6rem; color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.sign-in { display: grid; gap: .4rem; max-width: 28rem; }
`;

export const UI_SCRIPT = `(() => {
  'use strict';
  const form = document.querySelector('form.filters');
  const live = document.getElementById('live');
  let timer;
  let running = false;
  let again = false;
  // Fetches the page (the fleet with the form's filter as its query) and swaps in its rows.
  const refresh = async () => {
    if (running) { again = true; return; }
    running = true;
    try {
      const response = await fetch(location.href, { credentials: 'same-origin' });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('refreshable');
      const old = document.getElementById('refreshable');
      if (fresh && old) {
        const focused = document.activeElement && old.contains(document.activeElement) && document.activeElement.getAttribute('href');
        old.replaceWith(document.importNode(fresh, true));
        if (focused) { const link = document.querySelector('#refreshable a[href="' + CSS.escape(focused) + '"]'); if (link) link.focus(); }
        // When the page last took in new content, for a measurement from the navigation's start.
        performance.mark('applyset-refreshed');
        live.textContent = 'Updated at ' + new Date().toLocaleTimeString();
      }
    } finally {
      running = false;
      if (again) { again = false; refresh(); }
    }
  };
  const soon = (delay) => { clearTimeout(timer); timer = setTimeout(refresh, delay); };
  if (form) {
    // Filtering as one types: the form's query becomes the page's, and the server answers the rows.
    form.addEventListener('input', () => {
      history.replaceState(null, '', '?' + new URLSearchParams(new FormData(form)).toString());
      soon(60);
    });
  }
  const watch = document.body.dataset.watch;
  if (!watch || !window.EventSource) return;
  const source = new EventSource('/updates');
  source.addEventListener('change', (event) => {
    const change = JSON.parse(event.data);
    if (watch !== '*' && watch !== change.namespace + '/' + change.name) return;
    soon(150);
  });
})();
`;

const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * The assets' paths carry their content's hash, so a browser keeps them for good and asks again only
 * for a new build: a page's start waits for neither after the first visit.
 */
export const UI_CSS_PATH = `/assets/ui-${version(UI_CSS)}.css`;
export const UI_SCRIPT_PATH = `/assets/ui-${version(UI_SCRIPT)}.js`;
