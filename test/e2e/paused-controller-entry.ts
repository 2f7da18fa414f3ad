// The controller as its own process, like controller-entry.ts, with one fault built in: when the file
// `armed` exists in APPLYSET_E2E_PAUSE_DIR, the first replica to finish the plan step named by
// APPLYSET_E2E_PAUSE_AT_STEP writes its pid to `paused` there and stops itself with SIGSTOP — a
// leader frozen mid-reconcile (a long GC pause, a frozen VM). The test resumes it with SIGCONT.
// It runs from the sources through tsx, not dist/: the hook it injects is test-only and not shipped.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runControllerCommand } from '../../src/cli/controller-command.js';
import { exitOnClosedPipe } from '../../src/main.js';

exitOnClosedPipe([process.stdout, process.stderr]);

const dir = process.env['APPLYSET_E2E_PAUSE_DIR'] ?? '';
const pauseAt = process.env['APPLYSET_E2E_PAUSE_AT_STEP'] ?? '';

process.exitCode = await runControllerCommand(
  // argv: controller <flags>; the subcommand name is ours already.
  process.argv.slice(3),
  { stdout: process.stdout, stderr: process.stderr, env: { ...process.env }, cwd: process.cwd() },
  {
    afterStep: (step) => {
      if (dir === '' || step.type !== pauseAt || !existsSync(path.join(dir, 'armed'))) return;
      try {
        // 'wx': only the first replica to get here pauses, once.
        writeFileSync(path.join(dir, 'paused'), String(process.pid), { flag: 'wx' });
      } catch {
        return;
      }
      process.kill(process.pid, 'SIGSTOP');
    },
  },
);
