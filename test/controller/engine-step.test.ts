import type { ApplySetEngine, ApplySetRequest, HealthWait } from '../../src/apply/apply-set-contract.js';
import type { RunStage } from '../../src/apply/run-stage.js';
import { runEngine } from '../../src/controller/engine-step.js';

const wait = (name: string): HealthWait => ({
  pending: [
    {
      ref: { group: 'apps', kind: 'Deployment', namespace: 'shop', name },
      status: 'InProgress',
      message: '',
    },
  ],
  parentResourceVersion: '11',
});
const nameOf = (report: HealthWait | RunStage): string =>
  'stage' in report ? report.stage : (report.pending[0]?.ref.name ?? '');
const request = (withWait: boolean) =>
  ({
    files: [],
    ...(withWait ? { wait: { timeoutMs: 1000, healthChecks: [] } } : {}),
  }) as unknown as ApplySetRequest;

describe('runEngine: the health wait as data the reconcile reads', () => {
  it('hands over each report in order, the engine going on only once it was handled, and ends with the run', async () => {
    const seen: string[] = [];
    const engine: ApplySetEngine = async (req) => {
      for (const name of ['web', 'db']) {
        await req.wait?.onHealthWait?.(wait(name));
        seen.push(`engine after ${name}`);
      }
      return { outcomes: [], parentUid: 'uid', completed: true };
    };
    const { run, waits } = runEngine(engine, request(true));
    for await (const report of waits) {
      seen.push(`read ${nameOf(report)}`);
      await Promise.resolve();
      seen.push(`handled ${nameOf(report)}`);
    }
    expect(seen).toEqual([
      'read web',
      'handled web',
      'engine after web',
      'read db',
      'handled db',
      'engine after db',
    ]);
    expect(await run).toEqual({ result: { outcomes: [], parentUid: 'uid', completed: true } });
  });

  it('gives what the engine threw as data, and ends the reports', async () => {
    const failure = new Error('boom');
    const { run, waits } = runEngine(async () => Promise.reject(failure), request(true));
    const reports: (HealthWait | RunStage)[] = [];
    for await (const report of waits) reports.push(report);
    expect(reports).toEqual([]);
    expect(await run).toEqual({ thrown: failure });
  });

  it('asks for no reports when the spec does not wait', async () => {
    const requests: ApplySetRequest[] = [];
    const { run } = runEngine(async (req) => {
      requests.push(req);
      return { outcomes: [], parentUid: 'uid', completed: true };
    }, request(false));
    await run;
    expect(requests[0]?.wait?.onHealthWait).toBeUndefined();
  });

  it('hands over the stages of the run (sync waves, hook phases) in the same feed, waited for alike', async () => {
    const seen: string[] = [];
    const engine: ApplySetEngine = async (req) => {
      await req.onStage?.({
        stage: 'hook-phase',
        phase: 'PreSync',
        hooks: [],
        parentResourceVersion: undefined,
      });
      seen.push('engine after PreSync');
      return { outcomes: [], parentUid: 'uid', completed: true };
    };
    const { run, waits } = runEngine(engine, request(false));
    for await (const report of waits) seen.push(`handled ${nameOf(report)}`);
    await run;
    expect(seen).toEqual(['handled hook-phase', 'engine after PreSync']);
  });
});
