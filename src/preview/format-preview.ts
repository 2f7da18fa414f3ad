/**
 * A preview as text (pure): the lines `applyset diff --applyset-object` prints, in the shape of the
 * plain `applyset diff`'s, or a pull-request comment in Markdown (`-o markdown`).
 */
import type { DependencyWait } from '../api/dependencies.js';
import { driftItemMessage } from '../api/safe-mode-status.js';
import { describeObjectRef } from '../manifests/object-ref.js';
import type { ApplySetPreview, PreviewEntry, PreviewHold, PreviewStop } from './applyset-preview.js';
import { previewCounts } from './preview-entries.js';
import { entryLinesByWave, hookLines, orderMarkdown } from './format-preview-order.js';

/** `main@sha1:…` or `local directory ./checkout`. */
function previewedName(preview: ApplySetPreview): string {
  const { previewed } = preview;
  return previewed.kind === 'local' ? `local directory ${previewed.directory}` : previewed.revision;
}

/** `1 to create, 2 to configure, 1 to prune, 1 held back, 3 unchanged`: what a summary line counts. */
function previewSummary(preview: ApplySetPreview): string {
  const counts = previewCounts(preview);
  const parts = [
    `${counts.create} to create`,
    `${counts.configure} to configure`,
    ...(counts.adopt === 0 ? [] : [`${counts.adopt} to adopt`]),
    `${counts.prune} to prune`,
    ...(counts['held-back'] === 0 ? [] : [`${counts['held-back']} held back`]),
    ...(counts.drift === 0 ? [] : [`${counts.drift} drifted (reported only)`]),
    ...(counts.error === 0 ? [] : [`${counts.error} failing`]),
    `${counts.unchanged} unchanged`,
  ];
  return parts.join(', ');
}

/**
 * What holds the run back, said before the counts: `suspended (spec.suspend)`, `waiting for
 * dependencies (DependencyNotReady)`; empty when nothing does.
 */
function holdsSummary(preview: ApplySetPreview): string {
  const holds = preview.holds ?? [];
  if (holds.length === 0) return '';
  const named = holds.map((hold) =>
    hold.kind === 'suspended'
      ? 'suspended (spec.suspend)'
      : hold.reason === 'DependencyNotReady'
        ? `waiting for dependencies (${hold.reason})`
        : `stalled on spec.dependsOn (${hold.reason})`,
  );
  return `${named.join(' and ')}, nothing is applied now; once it is: `;
}

/** `shop/db: Ready=False (HealthCheckFailed)`; the Ready reason added when the problem is another. */
function describeDependencyWait(wait: DependencyWait): string {
  const { ready } = wait;
  const readyNote =
    ready === undefined || wait.problem.includes(ready.reason)
      ? ''
      : ` (Ready=${ready.status}, ${ready.reason})`;
  return `ApplySet ${wait.namespace}/${wait.name}: ${wait.problem}${readyNote}`;
}

/** The lines that say why the run is held back, each hold in the order the controller checks them. */
function holdLines(preview: ApplySetPreview): string[] {
  const { namespace, name } = preview.applySet;
  return (preview.holds ?? []).flatMap((hold: PreviewHold) => {
    if (hold.kind === 'suspended') {
      return [
        `suspended (spec.suspend): the controller applies nothing until it is resumed (applyset resume ${name} -n ${namespace}); below is what its run would then do`,
      ];
    }
    // The objects of spec.dependsOn not ready: the message names each with its state, as read now.
    if (hold.reason === 'DependencyNotReady' && hold.waitingFor.length === 0)
      return [`would wait for spec.dependsOn (${hold.reason}): ${hold.message}`];
    if (hold.waitingFor.length === 0)
      return [`would stall on spec.dependsOn: ${hold.reason}: ${hold.message}`];
    return hold.waitingFor.map((wait) => `would wait for dependency ${describeDependencyWait(wait)}`);
  });
}

/** `could not be previewed: REASON: message`: all a failed preview says, without counts. */
function failureSummary(stop: PreviewStop): string {
  return `could not be previewed: ${stop.reason}: ${stop.message}`;
}

/**
 * One line per object, its field changes indented below it; then the waits and the stop. A preview
 * that failed is its first line, saying why, and the problems found.
 */
export function formatPreviewText(preview: ApplySetPreview): string {
  const { namespace, name } = preview.applySet;
  const subject = `applyset/${name} -n ${namespace} at ${previewedName(preview)}, as ${preview.identity.user}`;
  if (preview.failed === true && preview.stopped !== undefined) {
    const problems = preview.entries.flatMap(textOf);
    return `${[`${subject}: ${failureSummary(preview.stopped)}`, ...problems].join('\n')}\n`;
  }
  const lines = [`${subject}: ${holdsSummary(preview)}${previewSummary(preview)}`, ...holdLines(preview)];
  lines.push(...entryLinesByWave(preview, textOf), ...hookLines(preview.order));
  if (preview.drifted !== undefined) {
    lines.push(`would report ${preview.drifted.reason}, correcting nothing: ${preview.drifted.message}`);
  }
  if (preview.waitsFor.length > 0) {
    lines.push(`would wait for ${preview.waitsFor.map(describeObjectRef).join(', ')}`);
  }
  if (preview.stopped !== undefined) {
    lines.push(`the run would stop, nothing written: ${preview.stopped.reason}: ${preview.stopped.message}`);
  }
  return `${lines.join('\n')}\n`;
}

function textOf(entry: PreviewEntry): string[] {
  const changes = (list: readonly string[]) => list.map((line) => `    ${line}`);
  const serverSide = (reason: string | undefined) =>
    reason === undefined ? '' : ` (applied server-side: ${reason})`;
  switch (entry.kind) {
    case 'create':
      return [`+ ${describeObjectRef(entry.ref)} (new)${serverSide(entry.serverSide)}`];
    case 'configure':
      return [`~ ${describeObjectRef(entry.ref)}${serverSide(entry.serverSide)}`, ...changes(entry.changes)];
    case 'adopt':
      return [
        `~ ${describeObjectRef(entry.ref)} (adopted: it has no apply-owner)`,
        ...changes(entry.changes),
      ];
    case 'prune':
      return [`- ${describeObjectRef(entry.ref)} (pruned)`];
    case 'held-back':
      return [`= ${describeObjectRef(entry.ref)} (held back, not pruned: ${entry.reason})`];
    case 'drift':
      return [
        `? ${describeObjectRef(entry.ref)} (drifted: reported, not corrected, driftMode Warn)`,
        `    ${driftItemMessage(entry.fields)}`,
      ];
    case 'error':
      return [`! ${errorSubject(entry)}: ${entry.message}`];
  }
}

function errorSubject(entry: PreviewEntry & { kind: 'error' }): string {
  if (entry.ref !== undefined) return describeObjectRef(entry.ref);
  return entry.file ?? 'the revision';
}

/**
 * A pull-request comment: a heading naming the ApplySet and the revision, a summary line with the
 * counts, a table of every object, then each change's fields in a ```diff block. Prunes, objects held
 * back and a stopped run are called out. A Secret's values are already masked in the changes.
 */
export function formatPreviewMarkdown(preview: ApplySetPreview): string {
  const { namespace, name } = preview.applySet;
  const heading = `### applyset diff: ApplySet \`${namespace}/${name}\` at \`${previewedName(preview)}\``;
  if (preview.failed === true && preview.stopped !== undefined)
    return failedMarkdown(heading, preview, preview.stopped);
  const out = [
    heading,
    '',
    ...holdsMarkdown(preview),
    `**${previewSummary(preview)}**, as \`${preview.identity.user}\``,
    '',
  ];
  if (preview.stopped !== undefined) {
    out.push(
      `> [!WARNING]`,
      `> The run would stop and write nothing: **${preview.stopped.reason}**: ${inline(preview.stopped.message)}`,
      '',
    );
  }
  if (preview.entries.length === 0) out.push('Nothing would change.', '');
  else out.push(...tableOf(preview.entries), '');
  for (const entry of preview.entries) {
    if ((entry.kind === 'configure' || entry.kind === 'adopt') && entry.changes.length > 0) {
      out.push(
        `#### \`${describeObjectRef(entry.ref)}\``,
        '',
        '```diff',
        ...entry.changes.flatMap(diffLines),
        '```',
        '',
      );
    }
  }
  if (preview.drifted !== undefined) {
    out.push(
      '> [!NOTE]',
      `> driftMode Warn: the run would report **${preview.drifted.reason}** and correct nothing: ${inline(preview.drifted.message)}`,
      '',
    );
  }
  out.push(...orderMarkdown(preview.order));
  if (preview.waitsFor.length > 0) {
    out.push(
      `Would wait for: ${preview.waitsFor.map((ref) => `\`${describeObjectRef(ref)}\``).join(', ')}`,
      '',
    );
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** A preview that failed: why, in a quote, and the problems found; no counts, no table. */
function failedMarkdown(heading: string, preview: ApplySetPreview, { reason, message }: PreviewStop): string {
  const problems = preview.entries.map((entry) =>
    entry.kind === 'error' ? `- \`${errorSubject(entry)}\`: ${inline(entry.message)}` : '',
  );
  const out = [
    heading,
    '',
    '> [!CAUTION]',
    `> **Could not be previewed**, as \`${preview.identity.user}\`: **${reason}**: ${inline(message)}`,
    '',
    ...problems.filter((line) => line !== ''),
  ];
  return `${out.join('\n').trimEnd()}\n`;
}

const VERBS: Readonly<Record<PreviewEntry['kind'], string>> = {
  create: '➕ create',
  configure: '✏️ configure',
  adopt: '🤝 adopt',
  prune: '🗑️ **prune**',
  'held-back': '✋ **held back**',
  drift: '👀 drift, reported only',
  error: '❌ **error**',
};

function tableOf(entries: readonly PreviewEntry[]): string[] {
  const rows = entries.map((entry) => {
    const subject = entry.kind === 'error' ? errorSubject(entry) : describeObjectRef(entry.ref);
    return `| ${VERBS[entry.kind]} | \`${subject}\` | ${inline(noteOf(entry))} |`;
  });
  return ['| change | object | note |', '| --- | --- | --- |', ...rows];
}

function noteOf(entry: PreviewEntry): string {
  switch (entry.kind) {
    case 'create':
    case 'configure':
      return entry.serverSide === undefined ? '' : `applied server-side: ${entry.serverSide}`;
    case 'adopt':
      return 'it has no apply-owner; this set takes it over';
    case 'prune':
      return 'left the set: deleted';
    case 'held-back':
      return entry.reason;
    case 'drift':
      return `${driftItemMessage(entry.fields)}; not corrected (driftMode Warn)`;
    case 'error':
      return entry.message;
  }
}

/** The holds first of all, in a quote a reviewer cannot miss; nothing when the run is not held. */
function holdsMarkdown(preview: ApplySetPreview): string[] {
  const holds = preview.holds ?? [];
  if (holds.length === 0) return [];
  const lines = holds.flatMap((hold) => {
    if (hold.kind === 'suspended')
      return ['> **Suspended** (`spec.suspend`): the controller applies nothing until it is resumed.'];
    if (hold.reason === 'DependencyNotReady' && hold.waitingFor.length === 0)
      return [`> **Waiting for dependencies** (${hold.reason}): ${inline(hold.message)}`];
    if (hold.waitingFor.length === 0)
      return [`> **Stalled on \`spec.dependsOn\`**: **${hold.reason}**: ${inline(hold.message)}`];
    return [
      `> **Waiting for dependencies** (${hold.reason}): nothing is applied until they are Ready.`,
      ...hold.waitingFor.map((wait) => `> - ${inline(describeDependencyWait(wait))}`),
    ];
  });
  return ['> [!IMPORTANT]', ...lines, '> Below is what the run would do once it may.', ''];
}

/** `path: before → after` as the removed and the added line of a diff block. */
function diffLines(change: string): string[] {
  const match = /^(.*?): (.*) → (.*)$/s.exec(change);
  if (match === null) return [`  ${change}`];
  const [, path, before, after] = match;
  return [
    ...(before === '(absent)' ? [] : [`- ${path}: ${before}`]),
    ...(after === '(absent)' ? [] : [`+ ${path}: ${after}`]),
  ];
}

/** Text in a table cell or a quote: one line, no column breaks. */
function inline(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}
