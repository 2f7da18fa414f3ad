import { bearerTokenOf } from '../../src/ui/bearer-token.js';
import { UI_TOKEN_COOKIE } from '../../src/ui/ui-access.js';

describe('bearerTokenOf', () => {
  it('reads the token of an Authorization: Bearer header, whatever the case of the scheme', () => {
    expect(bearerTokenOf({ authorization: 'Bearer abc.def-ghi_' })).toBe('abc.def-ghi_');
    expect(bearerTokenOf({ authorization: 'bearer abc' })).toBe('abc');
  });

  it('reads the sign-in cookie among others, percent-decoded', () => {
    const cookie = `theme=dark; ${UI_TOKEN_COOKIE}=ey%2Babc.def; other=1`;
    expect(bearerTokenOf({ cookie })).toBe('ey+abc.def');
  });

  it('takes the Authorization header over the cookie, and does not fall back when it is not a bearer token', () => {
    const cookie = `${UI_TOKEN_COOKIE}=from-cookie`;
    expect(bearerTokenOf({ authorization: 'Bearer from-header', cookie })).toBe('from-header');
    expect(bearerTokenOf({ authorization: 'Basic dXNlcjpwYXNz', cookie })).toBeUndefined();
  });

  it('finds no token in an empty, spaced, overlong or badly encoded value', () => {
    expect(bearerTokenOf({})).toBeUndefined();
    expect(bearerTokenOf({ authorization: 'Bearer ' })).toBeUndefined();
    expect(bearerTokenOf({ authorization: 'Bearer a b' })).toBeUndefined();
    expect(bearerTokenOf({ authorization: `Bearer ${'a'.repeat(17 * 1024)}` })).toBeUndefined();
    expect(bearerTokenOf({ cookie: `${UI_TOKEN_COOKIE}=` })).toBeUndefined();
    expect(bearerTokenOf({ cookie: `${UI_TOKEN_COOKIE}=%E0%A4%A` })).toBeUndefined();
    expect(bearerTokenOf({ cookie: `x${UI_TOKEN_COOKIE}=abc` })).toBeUndefined();
  });
});
