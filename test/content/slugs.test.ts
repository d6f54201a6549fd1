import { describe, expect, it } from 'vitest';
import { slugify, uniqueSlug } from '../../src/content/slugs.js';
import { SLUG_PATTERN } from '../../src/content/fields.js';

describe('slugify', () => {
  it.each([
    ['Hello World', 'hello-world'],
    ['  Crème brûlée: à la carte!  ', 'creme-brulee-a-la-carte'],
    ['Ünïcödé Ñame', 'unicode-name'],
    ['v1.4.0 — release', 'v1-4-0-release'],
    ['---', 'untitled'],
    ['100% done_now', '100-done-now'],
  ])('turns %j into %j', (title, slug) => {
    expect(slugify(title)).toBe(slug);
    expect(slug).toMatch(SLUG_PATTERN);
  });

  it('keeps at most 80 characters and never ends with a dash', () => {
    const slug = slugify(`${'a'.repeat(79)} b and more`);
    expect(slug.length).toBeLessThanOrEqual(80);
    expect(slug).toMatch(SLUG_PATTERN);
  });
});

describe('uniqueSlug', () => {
  it('appends -2, -3, … to a taken slug', async () => {
    const taken = new Set(['launch', 'launch-2']);
    expect(await uniqueSlug('launch', async (slug) => taken.has(slug))).toBe('launch-3');
    expect(await uniqueSlug('fresh', async (slug) => taken.has(slug))).toBe('fresh');
  });

  it('shortens a long base so the suffix fits in 80 characters', async () => {
    const base = 'x'.repeat(80);
    const slug = await uniqueSlug(base, async (candidate) => candidate === base);
    expect(slug).toBe(`${'x'.repeat(78)}-2`);
  });
});
