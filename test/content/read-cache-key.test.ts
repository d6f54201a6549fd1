import { describe, expect, it } from 'vitest';
import { listPostsInput } from '../../src/content/contract.js';
import { readCacheKey } from '../../src/content/read-cache.js';

describe('the domain read cache key', () => {
  it('changes when a query gains a parameter, so a new parameter is never left out of the key', () => {
    const query = listPostsInput.parse({ limit: 5 });
    const withTag = listPostsInput.parse({ limit: 5, tag: 'release' });
    const withNewParameter = { ...query, author: 'ada' };
    expect(readCacheKey('published', withTag)).not.toBe(readCacheKey('published', query));
    expect(readCacheKey('published', withNewParameter)).not.toBe(readCacheKey('published', query));
  });

  it('is the same for equal queries whatever the order of their keys', () => {
    expect(readCacheKey('published', { limit: 5, tag: 'a', cursor: '2026-01-01' })).toBe(
      readCacheKey('published', { cursor: '2026-01-01', tag: 'a', limit: 5 }),
    );
  });

  it('tells operations apart, and an absent parameter from a given one', () => {
    expect(readCacheKey('drafts', { limit: 5 })).not.toBe(readCacheKey('published', { limit: 5 }));
    expect(readCacheKey('published', { limit: 5, tag: undefined })).toBe(readCacheKey('published', { limit: 5 }));
    expect(readCacheKey('published', { limit: 5, tag: '' })).not.toBe(readCacheKey('published', { limit: 5 }));
  });
});
