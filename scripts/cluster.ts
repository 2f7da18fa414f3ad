// `npm run cluster:up` / `npm run cluster:down`: a local control plane for people (and for tests via
// APPLYSET_TEST_KUBECONFIG), started in the background and recorded in a state file.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  startControlPlane,
  stopRecordedControlPlane,
  type ControlPlaneInfo,
} from '../test/harness/control-plane.js';
import { isAlive } from '../test/harness/start-process.js';

const cacheRoot =
  process.env.APPLYSET_CACHE_DIR ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'applyset-controller');
const statePath = join(cacheRoot, 'cluster', 'state.json');

async function readState(): Promise<ControlPlaneInfo | undefined> {
  try {
    return JSON.parse(await readFile(statePath, 'utf8')) as ControlPlaneInfo;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function up(): Promise<void> {
  const existing = await readState();
  if (existing !== undefined && existing.pids.every((pid) => isAlive(pid))) {
    console.log(`already running at ${existing.server}\nexport KUBECONFIG=${existing.kubeconfigPath}`);
    return;
  }
  const cp = await startControlPlane({ log: (line) => console.error(line) });
  const { stop: _stop, ...info } = cp;
  await mkdir(dirname(statePath), { recursive: true });
  await writeFile(statePath, JSON.stringify(info, null, 2));
  console.log(`control plane running at ${cp.server}`);
  console.log(`export KUBECONFIG=${cp.kubeconfigPath}`);
  console.log(`tests can use it: APPLYSET_TEST_KUBECONFIG=${cp.kubeconfigPath} npm test`);
  console.log('stop it with: npm run cluster:down');
}

async function down(): Promise<void> {
  const state = await readState();
  if (state === undefined) {
    console.log('no local control plane is recorded');
    return;
  }
  await stopRecordedControlPlane(state);
  await rm(statePath, { force: true });
  console.log('control plane stopped');
}

const action = process.argv[2];
if (action === 'up') await up();
else if (action === 'down') await down();
else {
  console.error('usage: cluster.ts up|down');
  process.exitCode = 2;
}
