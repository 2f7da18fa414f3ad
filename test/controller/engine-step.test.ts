import type { ApplySetEngine, ApplySetRequest, HealthWait } from '../../src/apply/apply-set-contract.js';
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
      seen.push(`read ${report.pending[0]?.ref.name ?? ''}`);
      await Promise.resolve();
      seen.push(`handled ${report.pending[0]?.ref.name ?? ''}`);
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
    const reports: HealthWait[] = [];
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
});
