// Start-up benchmark: how long `applyset --version` and `applyset apply --help` take from the compiled
// dist/ (what `npx applyset` runs) and through tsx, beside `kubectl version --client`. Figures only,
// not a test: run `npm run build` first, then `npm run bench -- --startup [runs]`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const repoRoot = join(import.meta.dirname, '..');

interface StartupCase {
  readonly label: string;
  readonly command: string;
  readonly args: readonly string[];
}

/** The median wall time of `runs` runs, in seconds, and every run sorted. */
function measure(startup: StartupCase, runs: number): { median: number; all: number[] } {
  const all: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const result = spawnSync(startup.command, startup.args, { cwd: repoRoot, stdio: 'ignore' });
    if (result.error !== undefined) throw new Error(`${startup.label}: ${result.error.message}`);
    all.push((performance.now() - started) / 1000);
  }
  all.sort((a, b) => a - b);
  return { median: all[Math.floor(all.length / 2)] ?? 0, all };
}

export function runStartupBench(runs: number): void {
  const dist = join(repoRoot, 'dist', 'main.js');
  if (!existsSync(dist)) throw new Error('no dist/main.js: run npm run build first');
  const tsxEntry = join(repoRoot, 'test', 'e2e', 'controller-entry.ts');
  const cases: StartupCase[] = [
    { label: 'applyset --version (dist)', command: process.execPath, args: ['bin/applyset.js', '--version'] },
    {
      label: 'applyset apply --help (dist)',
      command: process.execPath,
      args: ['bin/applyset.js', 'apply', '--help'],
    },
    {
      label: 'applyset --version (tsx)',
      command: process.execPath,
      args: ['--import', 'tsx', tsxEntry, '--version'],
    },
    {
      label: 'applyset apply --help (tsx)',
      command: process.execPath,
      args: ['--import', 'tsx', tsxEntry, 'apply', '--help'],
    },
    { label: 'kubectl version --client', command: 'kubectl', args: ['version', '--client'] },
  ];
  const [before] = loadavg();
  process.stdout.write(`start-up, median of ${runs} runs (load average ${before?.toFixed(2)})\n`);
  for (const startup of cases) {
    const { median, all } = measure(startup, runs);
    const spread = all.map((seconds) => seconds.toFixed(2)).join(' ');
    process.stdout.write(`${startup.label.padEnd(32)} ${median.toFixed(3)} s   (${spread})\n`);
  }
  process.stdout.write(`load average at the end: ${loadavg()[0]?.toFixed(2)}\n`);
}
