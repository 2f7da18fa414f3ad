import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { root } from './helm-chart-kit.js';

// Prometheus's own promtool (built from the Go module proxy by scripts/build-promtool.sh) checks the
// chart's alert rules as Prometheus would load them. A missing promtool fails the suite: CI builds it
// first, and a skipped rule test would let a broken alert land.

const execFileAsync = promisify(execFile);

/** promtool as scripts/build-promtool.sh built it, or the one APPLYSET_PROMTOOL names. */
export async function findPromtool(): Promise<string> {
  const override = process.env['APPLYSET_PROMTOOL'];
  if (override !== undefined && override !== '') return override;
  try {
    const script = path.join(root, 'scripts/build-promtool.sh');
    const { stdout } = await execFileAsync('bash', [script, '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`promtool is needed for the rule tests and is not built (${detail})`, { cause: error });
  }
}

export interface PromtoolResult {
  readonly ok: boolean;
  /** stdout and stderr together: promtool reports failures on either. */
  readonly output: string;
}

/**
 * Writes `groups` as a rule file beside a copy of `testFile` (whose rule_files names `rules.yaml`), and
 * runs `promtool check rules` then, if that passed, `promtool test rules` on them.
 */
export async function checkAndTestRules(
  promtool: string,
  groups: unknown,
  testFile: string,
): Promise<PromtoolResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'applyset-rules-'));
  try {
    await writeFile(path.join(dir, 'rules.yaml'), yaml.dump({ groups }));
    await cp(testFile, path.join(dir, 'rules-test.yaml'));
    const check = await run(promtool, ['check', 'rules', 'rules.yaml'], dir);
    if (!check.ok) return check;
    const test = await run(promtool, ['test', 'rules', 'rules-test.yaml'], dir);
    return { ok: test.ok, output: `${check.output}\n${test.output}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(promtool: string, args: readonly string[], cwd: string): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await execFileAsync(promtool, [...args], { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout}${stderr}` || String(error) };
  }
}
