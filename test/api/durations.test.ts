import { DURATION_PATTERN, InvalidDurationError, parseDuration } from '../../src/api/durations.js';

describe('parseDuration', () => {
  it.each([
    ['300ms', 300],
    ['1s', 1000],
    ['1m30s', 90_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['0.5s', 500],
    ['1m1m', 120_000],
    ['0s', 0],
  ])('reads %s as %d ms, like time.ParseDuration', (text, ms) => {
    expect(DURATION_PATTERN.test(text)).toBe(true);
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', 'm', '1d', '-1s', '1.s', '.5s', '1 m', ' 1m', '1m ', '1us', '1ns', '1M'])(
    'refuses %j, as the CRD pattern does',
    (text) => {
      expect(DURATION_PATTERN.test(text)).toBe(false);
      expect(() => parseDuration(text)).toThrow(InvalidDurationError);
    },
  );

  it('names the text in the error', () => {
    const error = captureError(() => parseDuration('ten minutes'));
    expect(error).toMatchObject({
      name: 'InvalidDurationError',
      code: 'INVALID_DURATION',
      text: 'ten minutes',
    });
    expect(String((error as Error).message)).toContain('"ten minutes"');
  });
});

function captureError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
