import type { ApplySet, ApplySetCondition } from '../api/applyset-types.js';
import { ageOf, fleetRow } from './fleet-row.js';
import type { HookJobLog } from './hook-job-logs.js';
import { html, type SafeHtml } from './html.js';
import { inventoryTree } from './inventory-tree.js';
import { renderRunStage } from './render-run-stage.js';
import { shortRevision } from './render-fleet-page.js';
import type { UiEvent, UiObjectState, UiPreview } from './ui-data.js';

export interface ApplySetPage {
  readonly applySet: ApplySet;
  /** The set's objects with their health; `readLimit` of them at most were read. */
  readonly objects: readonly UiObjectState[];
  /** How many objects the set holds in all (status.inventory.totalCount). */
  readonly totalObjects: number;
  readonly events: readonly UiEvent[];
  /** The ApplySets this one depends on, by `namespace/name`, those the viewer may read resolved. */
  readonly dependencies: readonly { readonly key: string; readonly applySet: ApplySet | undefined }[];
  /** The readable ApplySets that depend on this one. */
  readonly dependents: readonly ApplySet[];
  readonly preview: UiPreview;
  /** The last lines of each failed hook Job's log of the last run, or why not (hook-job-logs.ts). */
  readonly hookLogs: readonly HookJobLog[];
  readonly nowMs: number;
}

const CONDITION_WORDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { True: 'Ready', False: 'Not ready', Unknown: 'Readiness not known yet' },
  Reconciling: { True: 'A run is under way', False: 'No run under way', Unknown: 'Run state not known' },
  Stalled: {
    True: 'Stalled: it will not get better without a change',
    False: 'Not stalled',
    Unknown: 'Stall not known',
  },
  Drifted: { True: 'Drift found and left as it is', False: 'No drift', Unknown: 'Drift not known' },
  Fighting: {
    True: 'Another writer keeps changing its fields',
    False: 'No fight',
    Unknown: 'Fights not known',
  },
};

function conditionWords(condition: ApplySetCondition): string {
  return CONDITION_WORDS[condition.type]?.[condition.status] ?? `${condition.type} is ${condition.status}`;
}

/**
 * The conditions with their messages, each message shown once: after a failure the controller writes
 * the same message into Ready, Reconciling and Stalled, and a long one three times buries the page.
 * A condition whose message an earlier one showed already has none here.
 */
function conditionsShown(
  conditions: readonly ApplySetCondition[],
): { readonly condition: ApplySetCondition; readonly message: string | undefined }[] {
  const shown = new Set<string>();
  return conditions.map((condition) => {
    const repeated = condition.message === '' || shown.has(condition.message);
    shown.add(condition.message);
    return { condition, message: repeated ? undefined : condition.message };
  });
}

/** One ApplySet: its state in words, source, last run, objects, dependencies, events and next run. */
export function renderApplySetBody(page: ApplySetPage): SafeHtml {
  const { applySet } = page;
  const row = fleetRow(applySet);
  const source = applySet.spec.source;
  const chart = applySet.spec.helm?.chart;
  // A chart of a repository follows spec.helm.version, not a ref.
  const ref =
    source.ref?.branch ??
    source.ref?.tag ??
    source.ref?.commit ??
    (chart === undefined ? '' : `${chart} ${applySet.spec.helm?.version ?? '*'}`);
  return html`<p class="crumbs"><a href="/">ApplySets</a> / ${row.namespace}</p>
    <h1>${row.name} <span class="state state-${row.state.toLowerCase()}">${row.state}</span></h1>
    <div id="refreshable">
      <section aria-labelledby="h-conditions">
        <h2 id="h-conditions">Conditions</h2>
        <ul class="conditions">
          ${conditionsShown(applySet.status?.conditions ?? []).map(
            ({ condition, message }) =>
              html`<li>
                <strong>${conditionWords(condition)}</strong> (${condition.reason},
                ${ageOf(condition.lastTransitionTime, page.nowMs)}
                ago)${message === undefined ? '' : html`: <span class="message">${message}</span>`}
              </li>`,
          )}
          ${applySet.status?.conditions === undefined ? html`<li>Not reconciled yet.</li>` : ''}
        </ul>
      </section>
      <section aria-labelledby="h-source">
        <h2 id="h-source">Source</h2>
        <dl class="facts">
          <dt>Repository</dt>
          <dd><code>${source.url}</code></dd>
          <dt>Ref</dt>
          <dd>
            <code>${ref}</code>${source.path === undefined ? '' : html` path <code>${source.path}</code>`}
          </dd>
          <dt>Applied revision</dt>
          <dd><code>${shortRevision(row.revision) || 'none yet'}</code></dd>
          <dt>Last attempted</dt>
          <dd><code>${shortRevision(applySet.status?.lastAttemptedRevision ?? '') || 'none yet'}</code></dd>
          <dt>Last run</dt>
          <dd>
            ${row.applied} applied, ${row.unchanged} unchanged, ${row.pruned} pruned, ${row.failed} failed
          </dd>
        </dl>
        ${errorList('Errors', applySet.status?.errors ?? undefined)}
        ${errorList('Drift', applySet.status?.drift ?? undefined)}
      </section>
      ${renderRunStage(applySet, page.events, page.hookLogs)} ${renderPreview(page.preview)}
      ${renderInventory(page)} ${renderDependencies(page)} ${renderEvents(page)}
    </div>`;
}

function errorList(
  title: string,
  errors:
    | { readonly items: readonly { object: string; message: string }[]; readonly totalCount: number }
    | undefined,
): SafeHtml | '' {
  if (errors === undefined || errors.totalCount === 0) return '';
  return html`<h3>${title} (${errors.totalCount})</h3>
    <ul class="errors">
      ${errors.items.map(
        (item) => html`<li><code>${item.object}</code>: <span class="message">${item.message}</span></li>`,
      )}
    </ul>`;
}

function linkTo(namespace: string, name: string, text: string): SafeHtml {
  return html`<a href="/applysets/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}">${text}</a>`;
}

function renderDependencies(page: ApplySetPage): SafeHtml {
  if (page.dependencies.length === 0 && page.dependents.length === 0) {
    return html`<section aria-labelledby="h-deps">
      <h2 id="h-deps">Dependencies</h2>
      <p>None: it depends on no ApplySet and none depends on it.</p>
    </section>`;
  }
  const self = `${page.applySet.metadata.namespace}/${page.applySet.metadata.name}`;
  return html`<section aria-labelledby="h-deps">
    <h2 id="h-deps">Dependencies</h2>
    <ul class="graph">
      <li>
        ${page.dependents.length === 0
          ? ''
          : html`Needed by:
            ${page.dependents.map(
              (dependent, index) =>
                html`${index > 0 ? ', ' : ''}${linkTo(
                  dependent.metadata.namespace,
                  dependent.metadata.name,
                  `${dependent.metadata.namespace}/${dependent.metadata.name}`,
                )}
                (${fleetRow(dependent).state})`,
            )}`}
        <ul>
          <li>
            <strong>${self}</strong>${page.dependencies.length === 0
              ? ''
              : html` waits for:
                  <ul>
                    ${page.dependencies.map(({ key, applySet }) => {
                      const [namespace = '', name = ''] = key.split('/');
                      return applySet === undefined
                        ? html`<li>${key} (not found, or not yours to read)</li>`
                        : html`<li>${linkTo(namespace, name, key)} (${fleetRow(applySet).state})</li>`;
                    })}
                  </ul>`}
          </li>
        </ul>
      </li>
    </ul>
  </section>`;
}

function renderInventory(page: ApplySetPage): SafeHtml {
  const tree = inventoryTree(page.objects);
  const unread = page.totalObjects - page.objects.length;
  return html`<section aria-labelledby="h-inventory">
    <h2 id="h-inventory">Objects (${page.totalObjects})</h2>
    ${page.totalObjects === 0 ? html`<p>The set holds no objects yet.</p>` : ''}
    ${unread > 0
      ? html`<p>
          The health of the first ${page.objects.length} is shown; ${unread} more are not listed here.
        </p>`
      : ''}
    <ul class="tree">
      ${tree.map(
        (namespace) =>
          html`<li>
            <span class="ns"
              >${namespace.namespace === '' ? '(cluster-scoped)' : `namespace ${namespace.namespace}`}</span
            >
            <ul>
              ${namespace.kinds.map(
                (kind) =>
                  html`<li>
                    <span class="kind">${kind.kind}</span> (${kind.objects.length})
                    <ul>
                      ${kind.objects.map(
                        (object) =>
                          html`<li>
                            <span class="health health-${object.health.toLowerCase()}">${object.health}</span>
                            <code>${object.name}</code>${object.message === ''
                              ? ''
                              : html`: <span class="message">${object.message}</span>`}
                          </li>`,
                      )}
                    </ul>
                  </li>`,
              )}
            </ul>
          </li>`,
      )}
    </ul>
  </section>`;
}

function renderPreview(preview: UiPreview): SafeHtml {
  return html`<section aria-labelledby="h-next">
    <h2 id="h-next">What the next run would change</h2>
    ${preview.kind === 'unavailable'
      ? html`<p>${preview.reason}</p>`
      : html`<p>${preview.summary}</p>
          ${preview.diff === '' ? '' : html`<pre class="diff"><code>${preview.diff}</code></pre>`}`}
  </section>`;
}

function renderEvents(page: ApplySetPage): SafeHtml {
  return html`<section aria-labelledby="h-events">
    <h2 id="h-events">Recent events</h2>
    ${page.events.length === 0
      ? html`<p>No events (the API server keeps them for an hour).</p>`
      : html`<table class="events">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Type</th>
              <th scope="col">Reason</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            ${page.events.map(
              (event) =>
                html`<tr>
                  <td>${ageOf(event.time, page.nowMs)} ago${event.count > 1 ? ` (×${event.count})` : ''}</td>
                  <td>${event.type}</td>
                  <td>${event.reason}</td>
                  <td class="message">${event.message}</td>
                </tr>`,
            )}
          </tbody>
        </table>`}
  </section>`;
}
