// Applying a set directory with `applyset apply` into a namespace, and reading back a ConfigMap it made:
// the two steps most `apply` tests take in turn.

import { applyCommand } from '../../src/cli/apply-command.js';
import { getObject } from '../apply/apply-test-kit.js';
import { runCli, type CliRun } from './cli-test-kit.js';

/** `applyset apply -f DIR --applyset NAME -n NAMESPACE [FLAGS]`. */
export const applyInNamespace = (
  namespace: string,
  dir: string,
  applyset: string,
  ...flags: string[]
): Promise<CliRun> => runCli(applyCommand, ['-f', dir, '--applyset', applyset, '-n', namespace, ...flags]);

/** ConfigMap `namespace`/`name` as the server has it now, or undefined. */
export const liveConfigMap = (namespace: string, name: string) =>
  getObject(`/api/v1/namespaces/${namespace}/configmaps/${name}`);
