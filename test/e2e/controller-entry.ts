// The `applyset` command from the TypeScript sources through tsx: what the e2e controllers run when
// APPLYSET_E2E_ENTRY=src asks for the sources (outside CI), and what the closed-pipe test runs.
import { exitOnClosedPipe, main } from '../../src/main.js';

exitOnClosedPipe([process.stdout, process.stderr]);

process.exitCode = await main(process.argv.slice(2));
