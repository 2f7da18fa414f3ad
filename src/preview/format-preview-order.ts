/**
 * The order of a set with sync waves or hooks, as the preview's text and Markdown say it (pure): the
 * entries under a header per sync wave, in the order the waves are applied, and the hooks the run
 * would run, none of them run by the preview. A set without either is printed as before.
 */
import { describeObjectRef, objectRefKey } from '../manifests/object-ref.js';
import type { ApplySetPreview, PreviewEntry, PreviewHook, PreviewOrder } from './applyset-preview.js';

/**
 * The entries' lines: under `sync wave N (…):` headers when the set has waves (each wave's objects
 * that would change, or `no change`), the entries of no wave (prunes, errors of a file) after them.
 */
export function entryLinesByWave(
  preview: Pick<ApplySetPreview, 'entries' | 'order'>,
  linesOf: (entry: PreviewEntry) => string[],
): string[] {
  const waves = preview.order?.syncWaves ?? [];
  if (waves.length === 0) return preview.entries.flatMap(linesOf);
  const waveOf = new Map<string, number>();
  for (const { wave, refs } of waves) for (const ref of refs) waveOf.set(objectRefKey(ref), wave);
  const inWave = (entry: PreviewEntry): number | undefined =>
    entry.kind === 'prune' || entry.kind === 'held-back' || entry.ref === undefined
      ? undefined
      : waveOf.get(objectRefKey(entry.ref));
  const lines: string[] = [];
  for (const [index, { wave, refs }] of waves.entries()) {
    const after = index === 0 ? '' : `, applied once sync wave ${waves[index - 1]?.wave} is healthy`;
    lines.push(`sync wave ${wave} (${refs.length} ${refs.length === 1 ? 'object' : 'objects'}${after}):`);
    const entries = preview.entries.filter((entry) => inWave(entry) === wave);
    if (entries.length === 0) lines.push('  no change');
    for (const entry of entries) lines.push(...linesOf(entry).map((line) => `  ${line}`));
  }
  const rest = preview.entries.filter((entry) => inWave(entry) === undefined);
  if (rest.length > 0) lines.push('outside the waves (prunes go in the reverse wave order):');
  for (const entry of rest) lines.push(...linesOf(entry).map((line) => `  ${line}`));
  return lines;
}

/** `hooks the run would run (the preview runs none):` and a line per hook; nothing without hooks. */
export function hookLines(order: PreviewOrder | undefined): string[] {
  const hooks = order?.hooks ?? [];
  if (hooks.length === 0) return [];
  return [
    'hooks the run would run (the preview runs none):',
    ...hooks.map((hook) => `  ${describeHook(hook)}`),
  ];
}

/** `PreSync hook job.batch/migrate -n shop, weight -1, deleted on HookSucceeded`. */
function describeHook(hook: PreviewHook): string {
  const deleted =
    hook.deletePolicies.length === 0
      ? 'kept until its next run'
      : `deleted on ${hook.deletePolicies.join(', ')}`;
  return `${hook.phases.join(', ')} hook ${describeObjectRef(hook.ref)}, weight ${hook.weight}, ${deleted}`;
}

/** The waves and the hooks as Markdown sections; nothing for a set without either. */
export function orderMarkdown(order: PreviewOrder | undefined): string[] {
  if (order === undefined) return [];
  const out: string[] = [];
  if (order.syncWaves.length > 0) {
    out.push('**Sync waves**, each healthy before the next is applied:', '');
    for (const { wave, refs } of order.syncWaves) {
      out.push(`- wave ${wave}: ${refs.map((ref) => `\`${describeObjectRef(ref)}\``).join(', ')}`);
    }
    out.push('');
  }
  if (order.hooks.length > 0) {
    out.push(
      '**Hooks** the run would run (the preview runs none):',
      '',
      '| phase | weight | hook | delete policy |',
      '| --- | --- | --- | --- |',
      ...order.hooks.map(
        (hook) =>
          `| ${hook.phases.join(', ')} | ${hook.weight} | \`${describeObjectRef(hook.ref)}\` | ${hook.deletePolicies.join(', ') || 'none (kept until its next run)'} |`,
      ),
      '',
    );
  }
  return out;
}
