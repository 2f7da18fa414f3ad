import { generateSequence, renameSequence, type DiffSequence } from './generate-sequence.js';
import { findDisagreement, minimizeDisagreement, type Disagreement } from './minimize-sequence.js';
import type { DiffContext, StepReport } from './run-sequence.js';
import { writeFinding } from './write-finding.js';

export interface ExploreOptions {
  readonly context: DiffContext;
  /** Seeds are taken in order from here, so consecutive sequences cycle through the kinds. */
  readonly firstSeed: number;
  /** No new sequence starts after this time (ms since the epoch); running ones finish. */
  readonly deadline: number;
  readonly concurrency: number;
  readonly findingsDir: string;
  readonly log: (line: string) => void;
}

export interface ExploreStats {
  sequences: number;
  steps: number;
  disagreements: number;
  /** Failures of the harness itself (kubectl output not understood, the API server unreachable). */
  harnessErrors: number;
  lastSeed: number;
}

/**
 * Runs new seeds until the deadline. Each disagreement is minimized, run once more with kubectl's
 * request log on to capture both patches, and written as a reproduction directory.
 */
export async function exploreSeeds(options: ExploreOptions): Promise<ExploreStats> {
  const { context, concurrency, log } = options;
  const stats: ExploreStats = { sequences: 0, steps: 0, disagreements: 0, harnessErrors: 0, lastSeed: 0 };
  let nextSeed = options.firstSeed;
  const worker = async () => {
    while (Date.now() < options.deadline) {
      const seed = nextSeed++;
      stats.lastSeed = Math.max(stats.lastSeed, seed);
      const sequence = generateSequence(seed, context.crdGroup);
      try {
        const found = await findDisagreement(context, sequence);
        stats.sequences++;
        stats.steps += found?.sequence.steps.length ?? sequence.steps.length;
        if (found === undefined) continue;
        stats.disagreements++;
        log(`seed ${seed}: ${firstLine(found.mismatch.message)}`);
        const dir = await recordFinding(options, found);
        log(`seed ${seed}: reproduction written to ${dir}`);
      } catch (error) {
        stats.harnessErrors++;
        log(`seed ${seed}: harness error: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return stats;
}

async function recordFinding(options: ExploreOptions, original: Disagreement): Promise<string> {
  const { context } = options;
  const minimal = await minimizeDisagreement(context, original);
  const reports = await verboseRun(context, renameSequence(minimal.sequence, `${original.sequence.name}-r`));
  return writeFinding(options.findingsDir, context, { original, minimal, reports });
}

/** The step reports of a run with kubectl's request log, or none when this run agreed. */
async function verboseRun(context: DiffContext, sequence: DiffSequence): Promise<StepReport[]> {
  const reports: StepReport[] = [];
  const again = await findDisagreement({ ...context, onStep: (report) => reports.push(report) }, sequence);
  return again === undefined ? [] : reports;
}

/** The mismatch's first line, cut short: it may quote two whole last-applied annotations. */
function firstLine(message: string): string {
  const line = message.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
