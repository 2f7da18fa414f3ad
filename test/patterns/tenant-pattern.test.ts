import { compileTenantPattern, TenantPatternError } from '../../src/patterns/tenant-pattern.js';

describe('a pattern from tenant input', () => {
  it('matches in linear time: ^(a+)+$ against forty a and a dash answers at once', () => {
    const pattern = compileTenantPattern('^(a+)+$', 'encrypted_regex');
    const started = process.hrtime.bigint();
    expect(pattern.test(`${'a'.repeat(40)}-`)).toBe(false);
    expect(pattern.test('a'.repeat(100_000))).toBe(true);
    // A backtracking engine needs about 2^40 steps for the first text; RE2 needs a few thousand.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2_000);
  });

  it.each([
    ['^(data|stringData)$', 'stringData', true],
    ['^(data|stringData)$', 'metadata', false],
    ['(?i)^PASSWORD', 'password_hash', true],
    ['secret', 'my-secret-value', true],
    ['\\Aa\\z', 'a', true],
  ])('reads Go syntax as sops does: %s on %s is %s', (source, key, expected) => {
    expect(compileTenantPattern(source, 'encrypted_regex').test(key)).toBe(expected);
  });

  it.each([
    ['(?=a)', 'invalid or unsupported Perl syntax'],
    ['(a)\\1', 'invalid escape sequence'],
    ['(', 'missing closing \\)'],
  ])('refuses %s, which RE2 does not read, naming the field', (source, reason) => {
    expect(() => compileTenantPattern(source, 'sops.encrypted_regex')).toThrow(TenantPatternError);
    expect(() => compileTenantPattern(source, 'sops.encrypted_regex')).toThrow(
      new RegExp(`^sops\\.encrypted_regex is not a regular expression RE2 reads: .*${reason}`),
    );
  });

  it('refuses a pattern longer than 4096 characters', () => {
    expect(() => compileTenantPattern('a'.repeat(4097), 'encrypted_regex')).toThrow(
      'encrypted_regex is 4097 characters long, more than the 4096 a pattern may have',
    );
  });
});
