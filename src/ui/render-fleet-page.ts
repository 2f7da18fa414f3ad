import { parseRevision } from '../git/git-ref.js';
import { ageOf, matchesFilter, type FleetFilter, type FleetRow, type FleetState } from './fleet-row.js';
import { html, type SafeHtml } from './html.js';

const STATES: readonly FleetState[] = ['Ready', 'Progressing', 'Stalled', 'Failing', 'Suspended', 'Unknown'];

export interface FleetPage {
  readonly rows: readonly FleetRow[];
  readonly filter: FleetFilter;
  readonly nowMs: number;
  /** The most rows rendered, unless `all`: a page of 1,000 rows is slow to start and no one reads it. */
  readonly limit: number;
  readonly all: boolean;
  /** Why the ApplySets cannot be listed, shown above the table. */
  readonly problem: string | undefined;
}

/** The query of the filter, and of the link that shows every match. */
function filterQuery(filter: FleetFilter, all: boolean): string {
  const query = new URLSearchParams({
    namespace: filter.namespace,
    label: filter.label,
    state: filter.state,
  });
  if (all) query.set('all', '1');
  return query.toString();
}

/**
 * The fleet: the ApplySets the viewer may read that match the filter, one row each, the first `limit`
 * of them unless all are asked for. The filter is a GET form, so it works without JavaScript; the
 * script submits it as one types and swaps in the answer's rows.
 */
export function renderFleetBody(page: FleetPage): SafeHtml {
  const matching = page.rows.filter((row) => matchesFilter(row, page.filter));
  const rendered = page.all ? matching : matching.slice(0, page.limit);
  const counts = STATES.map(
    (state) => [state, page.rows.filter((row) => row.state === state).length] as const,
  )
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${count} ${state}`)
    .join(', ');
  return html`<h1>ApplySets</h1>
    <form method="get" action="/" class="filters" role="search" aria-label="Filter ApplySets">
      <label for="f-namespace">Namespace</label>
      <input id="f-namespace" name="namespace" value="${page.filter.namespace}" autocomplete="off" />
      <label for="f-label">Label</label>
      <input
        id="f-label"
        name="label"
        value="${page.filter.label}"
        placeholder="key=value"
        autocomplete="off"
      />
      <label for="f-state">State</label>
      <select id="f-state" name="state">
        <option value="">any</option>
        ${STATES.map(
          (state) => html`<option${page.filter.state === state ? ' selected' : ''}>${state}</option>`,
        )}
      </select>
      <button type="submit">Filter</button>
    </form>
    <div id="refreshable">
      ${page.problem === undefined
        ? ''
        : html`<p class="problem" role="alert">The ApplySets cannot be listed: ${page.problem}</p>`}
      <p id="fleet-count" class="count">
        <span id="shown">${matching.length}</span> of ${page.rows.length} ApplySets
        match${counts === '' ? '' : ` (in all: ${counts})`}.
        ${rendered.length < matching.length
          ? html`The first ${rendered.length} are listed:
              <a href="/?${filterQuery(page.filter, true)}">list all ${matching.length}</a>, or narrow the
              filter.`
          : ''}
      </p>
      <table class="fleet">
        <caption class="visually-hidden">
          ApplySets, one a row
        </caption>
        <thead>
          <tr>
            <th scope="col">Namespace</th>
            <th scope="col">Name</th>
            <th scope="col">State</th>
            <th scope="col">Revision</th>
            <th scope="col">Since</th>
            <th scope="col">Last run: applied / unchanged / pruned</th>
            <th scope="col">Drift</th>
            <th scope="col">Fights</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          ${rendered.map((row) => fleetRowHtml(row, page.nowMs))}
        </tbody>
      </table>
    </div>`;
}

function fleetRowHtml(row: FleetRow, nowMs: number): SafeHtml {
  const labels = Object.entries(row.labels)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
  const href = `/applysets/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}`;
  const failed = row.failed > 0 ? `, ${row.failed} failed` : '';
  const state = row.state.toLowerCase();
  // One line a row without indentation: 1,000 rows are the page, and parsing them most of its start.
  // prettier-ignore
  return html`<tr data-namespace="${row.namespace}" data-state="${row.state}"${labels === '' ? '' : html` data-labels="${labels}"`}><td>${row.namespace}</td><th scope="row"><a href="${href}">${row.name}</a></th><td><span class="state state-${state}">${row.state}</span></td><td><code>${shortRevision(row.revision)}</code></td><td>${ageOf(row.since, nowMs)}</td><td>${row.applied} / ${row.unchanged} / ${row.pruned}${failed}</td><td>${row.drifted > 0 ? `${row.drifted} drifted` : 'none'}</td><td>${row.fighting ? 'fighting' : 'none'}</td><td class="message">${row.message}</td></tr>
`;
}

/** `main@sha1:0123456789ab…` shortened to `main@0123456`, as `git log --oneline` shows commits. */
export function shortRevision(revision: string): string {
  const parsed = parseRevision(revision);
  if (parsed === undefined) return revision;
  const commit = parsed.commit.slice(0, 7);
  return parsed.ref === undefined ? commit : `${parsed.ref}@${commit}`;
}
