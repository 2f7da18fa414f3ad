// The import-cycle check of `npm run lint`: fails when files under src/ import one another in a circle.
// Type-only imports count, since a circle of types is still two files that cannot be read apart; the
// fix is to put the type with the file that provides it. Known circles being reworked elsewhere are
// listed, temporarily, in known-lint-debt.ts.
import { relative } from 'node:path';
import { parseCircular, parseDependencyTree } from 'dpdm';
import { KNOWN_IMPORT_CYCLES } from './known-lint-debt.js';

/** A circle is known when every file in it belongs to one of the listed groups. */
function isKnown(cycle: readonly string[]): boolean {
  return KNOWN_IMPORT_CYCLES.some((group) => cycle.every((file) => group.includes(file)));
}

const tree = await parseDependencyTree('src/**/*.ts', { tsconfig: 'tsconfig.json', transform: false });
const cycles = parseCircular(tree).map((cycle) => cycle.map((file) => relative('.', file)));
const unknown = cycles.filter((cycle) => !isKnown(cycle));
for (const cycle of unknown) console.error(`import cycle: ${[...cycle, cycle[0]].join(' -> ')}`);
if (unknown.length > 0) {
  console.error(`${unknown.length} import cycle(s) in src/: move each type to the file that provides it`);
  process.exitCode = 1;
}
