// The import-cycle check of `npm run lint`: fails when files under src/ import one another in a circle.
// Type-only imports count, since a circle of types is still two files that cannot be read apart; the
// fix is to put the type with the file that provides it.
import { relative } from 'node:path';
import { parseCircular, parseDependencyTree } from 'dpdm';

const tree = await parseDependencyTree('src/**/*.ts', { tsconfig: 'tsconfig.json', transform: false });
const cycles = parseCircular(tree).map((cycle) => cycle.map((file) => relative('.', file)));
for (const cycle of cycles) console.error(`import cycle: ${[...cycle, cycle[0]].join(' -> ')}`);
if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) in src/: move each type to the file that provides it`);
  process.exitCode = 1;
}
