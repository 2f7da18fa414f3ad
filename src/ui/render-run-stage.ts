/**
 * The "Waves and hooks" section of an ApplySet's page (docs/web-view.md): where a run stands, read
 * from the status the controller writes once per stage (a sync wave waited for, a phase of hooks
 * running), and which hook failed and why (the HookFailed condition and the HookFailed events naming
 * each hook), with the last lines of each failed hook Job's log or why none is shown (hook-job-logs.ts).
 * Nothing when the set is at none of these.
 */
import type { ApplySet } from '../api/applyset-types.js';
import { describeJob } from './failed-hook-jobs.js';
import type { HookJobLog } from './hook-job-logs.js';
import { html, type SafeHtml } from './html.js';
import type { UiEvent } from './ui-data.js';

/** The stage messages the controller writes (src/controller/run-stage-report.ts) start with these. */
const STAGE_PREFIXES = ['sync wave ', 'running '];

export function renderRunStage(
  applySet: ApplySet,
  events: readonly UiEvent[],
  hookLogs: readonly HookJobLog[],
): SafeHtml | '' {
  const conditions = applySet.status?.conditions ?? [];
  const reconciling = conditions.find((c) => c.type === 'Reconciling');
  const ready = conditions.find((c) => c.type === 'Ready');
  const stage =
    reconciling?.status === 'True' &&
    reconciling.reason === 'Progressing' &&
    STAGE_PREFIXES.some((prefix) => reconciling.message.startsWith(prefix))
      ? reconciling.message
      : undefined;
  const failed = ready?.reason === 'HookFailed' ? ready.message : undefined;
  const waves = ready?.reason === 'SyncWaveNotHealthy' ? ready.message : undefined;
  if (stage === undefined && failed === undefined && waves === undefined) return '';
  const hookEvents = events.filter((event) => event.reason === 'HookFailed');
  return html`<section aria-labelledby="h-stage">
    <h2 id="h-stage">Waves and hooks</h2>
    ${stage === undefined ? '' : html`<p>Now: <span class="message">${stage}</span></p>`}
    ${waves === undefined ? '' : html`<p>Sync wave not healthy: <span class="message">${waves}</span></p>`}
    ${failed === undefined
      ? ''
      : html`<p>Hook failed: <span class="message">${failed}</span></p>
          ${hookEvents.length === 0
            ? ''
            : html`<ul class="hook-failures">
                ${hookEvents.map((event) => html`<li class="message">${event.message}</li>`)}
              </ul>`}
          ${hookLogs.map(renderHookLog)}`}
  </section>`;
}

/** The last lines of a failed hook Job's newest Pod, or why there are none; a tenant's text, escaped. */
function renderHookLog(log: HookJobLog): SafeHtml {
  if ('noLog' in log) return html`<p class="hook-log-none">No log of ${describeJob(log)}: ${log.noLog}</p>`;
  return html`<h3>Log of ${describeJob(log)}</h3>
    <p class="hint">
      The last ${log.lines.length} lines of Pod <code>${log.pod}</code>, container
      <code>${log.container}</code>:
    </p>
    <pre class="log"><code>${log.lines.join('\n')}</code></pre>`;
}
