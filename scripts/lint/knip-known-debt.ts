// A knip preprocessor: drops the temporary exceptions listed in known-lint-debt.ts from the report
// (and from the counts knip's exit code is taken from), so every other dead export still fails lint.
import { relative } from 'node:path';
import type { Preprocessor } from 'knip';
import { KNOWN_DEAD_EXPORTS } from './known-lint-debt.js';

const EXPORT_ISSUE_TYPES = ['exports', 'types'] as const;

const dropKnownDebt: Preprocessor = (options) => {
  const issues = { ...options.issues };
  const counters = { ...options.counters };
  for (const type of EXPORT_ISSUE_TYPES) {
    const byFile: (typeof issues)[typeof type] = {};
    for (const [filePath, bySymbol] of Object.entries(issues[type])) {
      const known = KNOWN_DEAD_EXPORTS[relative(options.cwd, filePath)] ?? [];
      const kept = Object.entries(bySymbol).filter(([symbol]) => !known.includes(symbol));
      counters[type] -= Object.keys(bySymbol).length - kept.length;
      if (kept.length > 0) byFile[filePath] = Object.fromEntries(kept);
    }
    issues[type] = byFile;
  }
  return { ...options, issues, counters };
};

export default dropKnownDebt;
