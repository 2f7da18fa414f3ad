/**
 * The words of the events a reconcile records: counts, and the objects created, configured, pruned and
 * adopted, bounded so an event stays within the API server's length limit.
 */

import { MAX_STATUS_ERRORS } from './applyset-types.js';
import type { OutcomeCounts, ReconcileOutcome } from './reconcile-outcome.js';

/** Objects an event names per verb before it says how many more. */
const NAMED_PER_VERB = 10;

/** The longest event message the API server takes (events.k8s.io refuses more; core events are kept as short). */
export const EVENT_MESSAGE_LIMIT = 1024;

const CHANGE_VERBS = ['created', 'configured', 'pruned'] as const;

/**
 * `; created configmap/a -n x; configured deployment.apps/web -n x; pruned configmap/old -n x (+3 more,
 * 4 in all)`, within `maxChars`: past it, names are left out and counted rather than cut off in the
 * middle by the event's own length limit, so the total of each verb is always said.
 */
export function describeChanges(
  changes: ReconcileOutcomeChanges | undefined,
  maxChars: number = EVENT_MESSAGE_LIMIT,
): string {
  if (changes === undefined) return '';
  const verbs = CHANGE_VERBS.filter((verb) => changes[verb].length > 0);
  const parts: string[] = [];
  let left = maxChars - 2;
  for (const [index, verb] of verbs.entries()) {
    // Each verb still to describe gets an even share of what is left, so a long list of configured
    // objects does not crowd the pruned ones out of the event.
    const part = describeVerb(verb, changes[verb], Math.floor(left / (verbs.length - index)));
    parts.push(part);
    left -= part.length + 2;
  }
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}

/** `configured a, b (+3 more, 5 in all)`: the first names that fit in `maxChars`, then the count. */
function describeVerb(verb: string, names: readonly string[], maxChars: number): string {
  const more = (shown: number) =>
    shown === names.length ? '' : ` (+${names.length - shown} more, ${names.length} in all)`;
  let shown = 0;
  for (const name of names.slice(0, NAMED_PER_VERB)) {
    const candidate = `${verb} ${[...names.slice(0, shown), name].join(', ')}${more(shown + 1)}`;
    if (candidate.length > maxChars) break;
    shown += 1;
  }
  return shown === 0
    ? `${verb} ${names.length} object(s)`
    : `${verb} ${names.slice(0, shown).join(', ')}${more(shown)}`;
}

type ReconcileOutcomeChanges = NonNullable<Extract<ReconcileOutcome, { kind: 'applied' }>['changes']>;

/** `2 created, 1 configured, 3 unchanged, 1 pruned`: the counts an event reports. */
export function describeCounts(counts: OutcomeCounts): string {
  const parts = [
    `${counts.created} created`,
    `${counts.configured} configured`,
    `${counts.unchanged} unchanged`,
    `${counts.pruned} pruned`,
  ];
  if ((counts.adopted ?? 0) > 0) parts.push(`${counts.adopted} adopted`);
  if ((counts.pruneSkipped ?? 0) > 0) parts.push(`${counts.pruneSkipped} not pruned`);
  if (counts.failed > 0) parts.push(`${counts.failed} failed`);
  if (counts.conflicts > 0) parts.push(`${counts.conflicts} conflicts`);
  return parts.join(', ');
}

/** `; adopted: ns::ConfigMap:a, ns::ConfigMap:b`: an adoption is never silent, but an event stays short. */
export function describeAdopted(adopted: readonly string[]): string {
  if (adopted.length === 0) return '';
  const named = adopted.slice(0, MAX_STATUS_ERRORS).join(', ');
  const more = adopted.length > MAX_STATUS_ERRORS ? ` and ${adopted.length - MAX_STATUS_ERRORS} more` : '';
  return `; adopted: ${named}${more}`;
}
