import { Writable } from 'node:stream';
import { createProgressLine, formatProgress } from '../../src/cli/apply-command.js';

function stream(isTTY: boolean) {
  let written = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  });
  return { stderr: Object.assign(sink, { isTTY }), written: () => written };
}

const progress = (applied: number, toApply: number, pruned = 0, toPrune = 0) => ({
  applied,
  toApply,
  pruned,
  toPrune,
});

describe('the progress line', () => {
  it('reads as kubectl-style counts: applied 340/1000, pruned 12/40', () => {
    expect(formatProgress(progress(340, 1000, 12, 40))).toBe('applied 340/1000, pruned 12/40');
    expect(formatProgress(progress(340, 1000))).toBe('applied 340/1000');
  });

  it('rewrites one line on a terminal for a set of more than 100 objects, and erases it at the end', () => {
    const { stderr, written } = stream(true);
    const line = createProgressLine(stderr);
    line.update(progress(1, 101));
    line.update(progress(1, 101));
    line.update(progress(101, 101, 1, 2));
    line.end();
    expect(written()).toBe('\r\x1b[Kapplied 1/101\r\x1b[Kapplied 101/101, pruned 1/2\r\x1b[K');
  });

  it('stays silent for 100 objects or fewer', () => {
    const { stderr, written } = stream(true);
    const line = createProgressLine(stderr);
    line.update(progress(50, 100));
    line.end();
    expect(written()).toBe('');
  });

  it('never writes to a pipe or a file', () => {
    const { stderr, written } = stream(false);
    const line = createProgressLine(stderr);
    line.update(progress(500, 1000, 3, 40));
    line.end();
    expect(written()).toBe('');
  });
});
