// A CPU profile of the controller bench's at-rest window only (docs/performance.md, #39), without
// the burst before it (or of the burst alone, with `from=0`): preloaded into the controller through
// the bench's node flags,
//   APPLYSET_BENCH_NODE_FLAGS="--import file://$PWD/bench/at-rest-profiler.mjs?n=300&out=/tmp/at-rest" \
//     npm run bench -- --controller 300
// It counts the controller's `reconciled` log lines: at 2n (the fleet reconciled twice, where the
// bench starts its at-rest window) it starts node:inspector's profiler, `span` reconciles later (2n
// unless given) it stops it and writes
// <out>.cpuprofile (open it in Chrome DevTools) and <out>.txt, the process's CPU per reconcile while
// profiled. The bench's restart starts the controller again with the same flags: a later start's
// profile is written as <out>.<pid>.cpuprofile (and .txt), never over the first start's. Plain
// JavaScript, as the controller runs from dist/ without tsx.
import { Session } from 'node:inspector';
import { Buffer } from 'node:buffer';
import { existsSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const query = new URL(import.meta.url).searchParams;
const n = Number(query.get('n') ?? '100');
// How many reconciles the profile spans; default 2n (the fleet twice). At 10,000, `span=1000` ends it
// after one minute at rest instead of twenty.
const span = Number(query.get('span') ?? String(2 * n));
// How many reconciles come before it starts; default 2n (at rest). `from=0` profiles the burst: with
// `span=n`, from the start until every set was reconciled once.
const from = Number(query.get('from') ?? String(2 * n));
const out = query.get('out') ?? '/tmp/at-rest';
let count = 0;
let session;
let cpuAtStart;

function start() {
  session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  cpuAtStart = process.cpuUsage();
}

function stop() {
  const cpu = process.cpuUsage(cpuAtStart);
  const ms = (cpu.user + cpu.system) / 1000;
  cpuAtStart = undefined;
  session.post('Profiler.stop', (error, result) => {
    if (error) return;
    const name = existsSync(`${out}.cpuprofile`) ? `${out}.${process.pid}` : out;
    writeFileSync(`${name}.cpuprofile`, JSON.stringify(result.profile));
    writeFileSync(
      `${name}.txt`,
      `${span} reconciles, CPU ${ms.toFixed(0)} ms, ${(ms / span).toFixed(2)} ms each\n`,
    );
  });
}

const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  count += text.split('"msg":"reconciled"').length - 1;
  if (session === undefined && count >= from) start();
  else if (cpuAtStart !== undefined && count >= from + span) stop();
  return write(chunk, ...rest);
};
