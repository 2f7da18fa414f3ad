import { MAX_STATUS_ERRORS } from './applyset-types.js';
import type { OutcomeCounts, ReconcileOutcome } from './reconcile-outcome.js';

/** Objects an event names per verb before it says how many more. */
const NAMED_PER_VERB = 10;

/** `; created configmap/a -n x; configured deployment.apps/web -n x; pruned configmap/old -n x (+3 more)`. */
export function describeChanges(changes: ReconcileOutcomeChanges | undefined): string {
  if (changes === undefined) return '';
  const parts: string[] = [];
  for (const verb of ['created', 'configured', 'pruned'] as const) {
    const names = changes[verb];
    if (names.length === 0) continue;
    const more = names.length > NAMED_PER_VERB ? ` (+${names.length - NAMED_PER_VERB} more)` : '';
    parts.push(`${verb} ${names.slice(0, NAMED_PER_VERB).join(', ')}${more}`);
  }
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
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
