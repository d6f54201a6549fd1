import { describe, expect, it } from 'vitest';
import { InvalidRedirectUri } from '../../src/auth/errors.js';
import { matchRedirectUri, validateRedirectUri } from '../../src/auth/redirect-uri.js';

function refusal(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof InvalidRedirectUri) return error.code;
    throw error;
  }
}

describe('registering a redirect URI', () => {
  it.each([
    'https://app.example.com/callback',
    'https://app.example.com/callback?tenant=a',
    'https://app.example.com:8443/oauth/cb',
    'http://localhost/callback',
    'http://localhost:3000/callback',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:51234/cb',
    'http://[::1]/callback',
    'https://localhost/callback',
  ])('accepts %s', (uri) => {
    expect(refusal(() => validateRedirectUri(uri))).toBeNull();
  });

  it.each([
    ['a relative URI', '/callback'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: in upper case', 'JAVASCRIPT:alert(document.domain)//'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['file:', 'file:///etc/passwd'],
    ['a private scheme', 'com.example.app:/callback'],
    ['ftp:', 'ftp://example.com/cb'],
    ['a fragment', 'https://app.example.com/callback#frag'],
    ['an empty fragment', 'https://app.example.com/callback#'],
    ['user information', 'https://user@app.example.com/callback'],
    ['user and password', 'https://user:pass@app.example.com/callback'],
    ['the user@host trick', 'https://app.example.com@evil.com/callback'],
    ['http on a public host', 'http://app.example.com/callback'],
    ['http on localhost.evil.com', 'http://localhost.evil.com/callback'],
    ['http on 127.0.0.1.nip.io', 'http://127.0.0.1.nip.io/callback'],
    ['127.1 shorthand', 'http://127.1/callback'],
    ['a hex IPv4 loopback', 'http://0x7f000001/callback'],
    ['an upper-case host', 'https://App.Example.com/callback'],
    ['an upper-case scheme', 'HTTPS://app.example.com/callback'],
    ['a dot segment', 'https://app.example.com/a/../callback'],
    ['an encoded dot segment', 'https://app.example.com/a/%2e%2e/callback'],
    ['a backslash', 'https://app.example.com\\@evil.com/callback'],
    ['a backslash in the path', 'http://localhost\\callback'],
    ['a percent-encoded host', 'https://%61pp.example.com/callback'],
    ['the default port spelled out', 'https://app.example.com:443/callback'],
    ['port 0', 'http://localhost:0/callback'],
    ['a port out of range', 'http://localhost:65536/callback'],
    ['a port with a leading zero', 'http://localhost:080/callback'],
    ['a missing path slash', 'https://app.example.com'],
    ['whitespace', ' https://app.example.com/callback'],
    ['a 2049-character URI', `https://app.example.com/${'a'.repeat(2049 - 24)}`],
  ])('refuses %s', (_case, uri) => {
    expect(refusal(() => validateRedirectUri(uri))).toBe('invalid_redirect_uri');
  });

  it('accepts exactly 2048 characters', () => {
    const uri = `https://app.example.com/${'a'.repeat(2048 - 24)}`;
    expect(uri).toHaveLength(2048);
    expect(refusal(() => validateRedirectUri(uri))).toBeNull();
  });
});

describe('matching a requested redirect URI (spec 4.1 rules 1–4)', () => {
  const cases: Array<[string, string, string, boolean]> = [
    // rule 1: exact match
    ['exact https', 'https://app.example.com/callback', 'https://app.example.com/callback', true],
    ['exact with query', 'https://app.example.com/cb?x=1', 'https://app.example.com/cb?x=1', true],
    ['a different query', 'https://app.example.com/cb?x=1', 'https://app.example.com/cb?x=2', false],
    ['an added query', 'https://app.example.com/callback', 'https://app.example.com/callback?x=1', false],
    ['a longer path', 'https://app.example.com/callback', 'https://app.example.com/callback/more', false],
    ['changed case in the path', 'https://app.example.com/callback', 'https://app.example.com/Callback', false],
    ['changed case in the host', 'https://app.example.com/callback', 'https://APP.example.com/callback', false],
    ['a trailing slash', 'https://app.example.com/callback', 'https://app.example.com/callback/', false],
    ['percent-encoding', 'https://app.example.com/callback', 'https://app.example.com/%63allback', false],
    ['a dot segment', 'https://app.example.com/callback', 'https://app.example.com/x/../callback', false],
    ['a backslash', 'https://app.example.com/callback', 'https://app.example.com\\callback', false],
    ['userinfo', 'https://app.example.com/callback', 'https://attacker@app.example.com/callback', false],
    ['the user@host trick', 'https://app.example.com/callback', 'https://app.example.com@evil.com/callback', false],
    ['a different port on https', 'https://app.example.com/callback', 'https://app.example.com:8443/callback', false],
    // rule 4: fragments
    ['a fragment', 'https://app.example.com/callback', 'https://app.example.com/callback#x', false],
    ['an empty fragment', 'https://app.example.com/callback', 'https://app.example.com/callback#', false],
    // rule 2: a portless loopback URI matches any port
    ['localhost on a port', 'http://localhost/callback', 'http://localhost:49152/callback', true],
    ['localhost without a port', 'http://localhost/callback', 'http://localhost/callback', true],
    ['127.0.0.1 on a port', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000/callback', true],
    ['127.0.0.1 on port 65535', 'http://127.0.0.1/callback', 'http://127.0.0.1:65535/callback', true],
    ['[::1] on a port', 'http://[::1]/callback', 'http://[::1]:8080/callback', true],
    ['loopback with query on a port', 'http://127.0.0.1/cb?x=1', 'http://127.0.0.1:3000/cb?x=1', true],
    ['loopback with a different query', 'http://127.0.0.1/cb?x=1', 'http://127.0.0.1:3000/cb?x=2', false],
    ['loopback with a different path', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000/other', false],
    ['loopback with a fragment', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000/callback#x', false],
    ['loopback with userinfo', 'http://127.0.0.1/callback', 'http://user@127.0.0.1:3000/callback', false],
    ['loopback port 0', 'http://127.0.0.1/callback', 'http://127.0.0.1:0/callback', false],
    ['loopback port out of range', 'http://127.0.0.1/callback', 'http://127.0.0.1:65536/callback', false],
    ['loopback port with a leading zero', 'http://127.0.0.1/callback', 'http://127.0.0.1:03000/callback', false],
    ['loopback port with a sign', 'http://127.0.0.1/callback', 'http://127.0.0.1:+3000/callback', false],
    ['loopback with dot segments', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000/a/../callback', false],
    ['loopback with a backslash', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000\\callback', false],
    ['loopback with percent-encoding', 'http://127.0.0.1/callback', 'http://127.0.0.1:3000/%63allback', false],
    ['loopback with changed case', 'http://localhost/callback', 'http://LOCALHOST:3000/callback', false],
    // rule 2: scheme and host must match exactly
    ['localhost for 127.0.0.1', 'http://127.0.0.1/callback', 'http://localhost:3000/callback', false],
    ['127.0.0.1 for localhost', 'http://localhost/callback', 'http://127.0.0.1:3000/callback', false],
    ['[::1] for localhost', 'http://localhost/callback', 'http://[::1]:3000/callback', false],
    ['127.1 for 127.0.0.1', 'http://127.0.0.1/callback', 'http://127.1:3000/callback', false],
    ['localhost.evil.com', 'http://localhost/callback', 'http://localhost.evil.com:3000/callback', false],
    ['localhost.evil.com without port', 'http://localhost/callback', 'http://localhost.evil.com/callback', false],
    ['https for a registered http', 'http://localhost/callback', 'https://localhost:3000/callback', false],
    // rule 3: never for https or for a non-loopback host
    ['https loopback on another port', 'https://localhost/callback', 'https://localhost:3000/callback', false],
    ['https 127.0.0.1 on another port', 'https://127.0.0.1/callback', 'https://127.0.0.1:3000/callback', false],
    ['a registered port is exact', 'http://localhost:3000/callback', 'http://localhost:3001/callback', false],
    ['a registered port matches itself', 'http://localhost:3000/callback', 'http://localhost:3000/callback', true],
    // schemes
    ['javascript:', 'https://app.example.com/callback', 'javascript:alert(1)', false],
    ['data:', 'https://app.example.com/callback', 'data:text/html,hi', false],
    ['file:', 'https://app.example.com/callback', 'file:///etc/passwd', false],
  ];

  it.each(cases)('%s', (_case, registered, requested, matches) => {
    expect(refusal(() => matchRedirectUri([registered], requested))).toBe(matches ? null : 'invalid_redirect_uri');
  });

  it('matches any one of several registered URIs', () => {
    const registered = ['https://app.example.com/a', 'http://127.0.0.1/callback'];
    expect(refusal(() => matchRedirectUri(registered, 'http://127.0.0.1:4000/callback'))).toBeNull();
    expect(refusal(() => matchRedirectUri(registered, 'https://app.example.com/a'))).toBeNull();
    expect(refusal(() => matchRedirectUri(registered, 'https://app.example.com/b'))).toBe('invalid_redirect_uri');
  });
});
