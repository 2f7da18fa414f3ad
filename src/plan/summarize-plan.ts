import { describeObjectRef, objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import { formatFieldChange, type FieldChange } from './diff-fields.js';
import type { Plan, PruneKeepReason } from './plan.js';

/**
 * The categories of the prune proposal's `--dry-run` output, plus what the proposal leaves implicit:
 * conflicts, unread objects and prunes held back, each with its reason.
 */
export interface DryRunSummary {
  readonly toAdd: readonly ObjectRef[];
  readonly toModify: readonly { readonly ref: ObjectRef; readonly changes: readonly FieldChange[] }[];
  readonly unchanged: readonly ObjectRef[];
  /** Updates whose patch was not computed: they may or may not change. */
  readonly notCompared: readonly ObjectRef[];
  readonly toDelete: readonly ObjectRef[];
  readonly conflicts: readonly { readonly ref: ObjectRef; readonly detail: string }[];
  readonly notRead: readonly ObjectRef[];
  readonly notPruned: readonly {
    readonly ref: ObjectRef;
    readonly reason: PruneKeepReason;
    readonly detail: string;
  }[];
}

/**
 * Sorts a plan's actions into the dry-run categories. "Modified" versus "unchanged" needs the merge
 * engine, which the plan does not know: pass the field changes the executor computed per update
 * (keyed by `objectRefKey`; an empty list means unchanged). Updates without an entry are reported as
 * not compared.
 */
export function summarizePlan(
  plan: Plan,
  changes?: ReadonlyMap<string, readonly FieldChange[]>,
): DryRunSummary {
  const summary = {
    toAdd: [] as ObjectRef[],
    toModify: [] as { ref: ObjectRef; changes: readonly FieldChange[] }[],
    unchanged: [] as ObjectRef[],
    notCompared: [] as ObjectRef[],
    toDelete: [] as ObjectRef[],
    conflicts: [] as { ref: ObjectRef; detail: string }[],
    notRead: [] as ObjectRef[],
    notPruned: [] as { ref: ObjectRef; reason: PruneKeepReason; detail: string }[],
  };
  for (const step of plan.steps) {
    if (step.type === 'apply-wave') {
      for (const action of step.actions) {
        switch (action.type) {
          case 'create':
            summary.toAdd.push(action.ref);
            break;
          case 'update': {
            const fields = changes?.get(objectRefKey(action.ref));
            if (fields === undefined) summary.notCompared.push(action.ref);
            else if (fields.length === 0) summary.unchanged.push(action.ref);
            else summary.toModify.push({ ref: action.ref, changes: fields });
            break;
          }
          case 'conflict':
            summary.conflicts.push({
              ref: action.ref,
              detail:
                action.reason === 'owned-by-other'
                  ? ownedByOtherDetail(action.owner)
                  : 'exists without an apply-owner and adoption is disabled',
            });
            break;
          case 'unknown-read':
            summary.notRead.push(action.ref);
            break;
        }
      }
    } else if (step.type === 'prune-wave') {
      for (const action of step.actions) {
        if (action.type === 'delete') summary.toDelete.push(action.ref);
        else if (action.reason !== 'already-absent') {
          summary.notPruned.push({ ref: action.ref, reason: action.reason, detail: keepDetail(action) });
        }
      }
    }
  }
  return summary;
}

function keepDetail(action: {
  reason: PruneKeepReason;
  owner?: string;
  usedBy?: readonly ObjectRef[];
}): string {
  const users = (action.usedBy ?? []).map(describeObjectRef).join(', ');
  switch (action.reason) {
    case 'namespace-still-used':
      return `objects that stay live in it (${users})`;
    case 'crd-still-used':
      return `custom resources of it stay (${users})`;
    case 'owned-by-other':
      return ownedByOtherDetail(action.owner);
    case 'not-owned':
      return "it does not carry this set's apply-owner annotation (never taken over, or the annotation was removed)";
    case 'prune-disabled':
      return 'annotated applyset.dev/prune: disabled';
    case 'unknown-read':
      return 'it could not be read';
    case 'already-absent':
      return 'it is already gone';
  }
}

function ownedByOtherDetail(owner: string | undefined): string {
  return `owned by another set (apply-owner ${owner ?? '?'})`;
}

/** The printable form, section by section, in the order of the prune proposal's example. */
export function formatDryRunSummary(summary: DryRunSummary): string {
  const lines: string[] = [];
  const section = (title: string, entries: readonly string[], always: boolean) => {
    if (entries.length === 0 && !always) return;
    lines.push(title, ...(entries.length === 0 ? ['  (none)'] : entries.map((entry) => `  ${entry}`)));
  };
  section('Resources to add', summary.toAdd.map(describeObjectRef), true);
  section(
    'Resources modified',
    summary.toModify.flatMap(({ ref, changes }) => [
      describeObjectRef(ref),
      ...changes.map((change) => `  ${formatFieldChange(change)}`),
    ]),
    true,
  );
  section('Resources unmodified', summary.unchanged.map(describeObjectRef), true);
  section('Resources to update if changed (not compared)', summary.notCompared.map(describeObjectRef), false);
  section('Resources to delete', summary.toDelete.map(describeObjectRef), true);
  section(
    'Conflicts (left untouched)',
    summary.conflicts.map(({ ref, detail }) => `${describeObjectRef(ref)}: ${detail}`),
    false,
  );
  section('Not read (left untouched)', summary.notRead.map(describeObjectRef), false);
  section(
    'Not pruned',
    summary.notPruned.map(({ ref, detail }) => `${describeObjectRef(ref)}: ${detail}`),
    false,
  );
  return lines.join('\n') + '\n';
}
