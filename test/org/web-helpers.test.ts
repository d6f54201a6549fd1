import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/org/people/passwords.js';
import { h } from 'preact';
import { renderPage } from '../../src/org/web/layout.js';
import { safeReturnTo } from '../../src/org/web/return-to.js';

describe('return_to after sign-in', () => {
  it.each([
    ['/consent?request=abc', '/consent?request=abc'],
    ['/connections', '/connections'],
    ['/a/../connections', '/connections'],
  ])('keeps the same-origin path %s', (value, expected) => {
    expect(safeReturnTo(value)).toBe(expected);
  });

  it.each([
    'https://evil.example/',
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    'javascript:alert(1)',
    'connections',
    '',
    `/${'a'.repeat(2048)}`,
    // Dot segments that new URL() collapses into a network-path reference (RFC 3986 §4.2).
    '/..//evil.example',
    '/.//evil.example',
    '/%2e%2e//evil.example',
    '/.%2e//evil.example',
    '/%2E%2E//evil.example',
    '/a/../..//evil.example',
    '/../\\evil.example',
  ])('refuses %j', (value) => {
    expect(safeReturnTo(value)).toBeUndefined();
  });

  it('refuses anything that is not a string', () => {
    expect(safeReturnTo(['/a', '/b'])).toBeUndefined();
    expect(safeReturnTo(undefined)).toBeUndefined();
  });
});

describe('HTML output', () => {
  it('escapes every text and attribute value a page is given', () => {
    const page = renderPage({
      title: '</title><script>',
      children: h('p', { title: '" onmouseover="steal()' }, '<script>alert("x")</script> & more'),
    });
    expect(page).toContain('<title>&lt;/title>&lt;script> · Atrium</title>');
    expect(page).toContain('<p title="&quot; onmouseover=&quot;steal()">&lt;script>alert(&quot;x&quot;)&lt;/script> &amp; more</p>');
    expect(page).not.toContain('<script>');
  });
});

describe('passwords', () => {
  it('hashes with scrypt and a salt, and verifies', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toBe(await hashPassword('correct horse'));
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
  });

  it('never matches a missing or malformed hash', async () => {
    expect(await verifyPassword('', null)).toBe(false);
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
  });
});
