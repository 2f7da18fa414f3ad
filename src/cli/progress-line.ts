import type { ApplySetProgress } from '../apply/apply-set-contract.js';

/** Sets at most this large finish before a progress line would help. */
const MIN_OBJECTS_FOR_PROGRESS = 100;

export interface ProgressLine {
  readonly update: (progress: ApplySetProgress) => void;
  /** Erases the line, so the per-object output that follows starts on a clean line. */
  readonly end: () => void;
}

/**
 * One line on a terminal's stderr, rewritten in place (`applied 340/1000, pruned 12/40`), for sets of
 * more than 100 objects. Never on a pipe or a file: a log must not fill with carriage returns.
 */
export function createProgressLine(
  stderr: NodeJS.WritableStream & { readonly isTTY?: boolean },
): ProgressLine {
  let shown = '';
  return {
    update: (progress) => {
      if (stderr.isTTY !== true || progress.toApply <= MIN_OBJECTS_FOR_PROGRESS) return;
      const text = formatProgress(progress);
      if (text === shown) return;
      shown = text;
      stderr.write(`\r\x1b[K${text}`);
    },
    end: () => {
      if (shown !== '') stderr.write('\r\x1b[K');
      shown = '';
    },
  };
}

/** @internal test seam: a pure step its unit test runs alone */
export function formatProgress(progress: ApplySetProgress): string {
  const applied = `applied ${progress.applied}/${progress.toApply}`;
  return progress.toPrune === 0 ? applied : `${applied}, pruned ${progress.pruned}/${progress.toPrune}`;
}
