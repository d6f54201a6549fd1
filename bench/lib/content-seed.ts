/**
 * A realistic content database for benchmarks, written fast: bulk INSERTs through the service's own
 * database handle with the drizzle tables, instead of 10,000 API calls.
 *
 * The rows look like what the API writes: published posts with titles, SEO descriptions of 50–160
 * characters, 1–3 KB Markdown bodies and tags; roadmap items across every status, category and priority,
 * with vote rows that add up to each item's `votes`; 60 published changelog entries. Like `orderedNow()` (src/platform/time.ts), every
 * `published_at` and roadmap `updated_at` is unique to the microsecond, so cursors behave as in production.
 * A fixed random seed makes every run load the same data.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/database.js';
import { blogPosts, changelogEntries, roadmapItems, roadmapVotes } from '../../src/content/schema.js';
import { ROADMAP_CATEGORIES, ROADMAP_PRIORITIES } from '../../src/content/contract.js';
import { slugify } from '../../src/content/slugs.js';

export interface SeedOptions {
  posts: number;
  items: number;
}

export interface SeedSearchWord {
  word: string;
  /** Published posts whose title, description or body contains the word. */
  posts: number;
}

export interface SeedFacts {
  posts: number;
  items: number;
  votes: number;
  /** Public items open for voting (planned, in progress, considering). */
  votableSlugs: string[];
  /** A word found in a few dozen posts, and a rarer one. Neither occurs anywhere else in the data. */
  search: { common: SeedSearchWord; rare: SeedSearchWord };
  seconds: number;
}

const COMMON_WORD = 'observability';
const RARE_WORD = 'flamegraph';

export async function seedContent(database: Database, options: SeedOptions): Promise<SeedFacts> {
  const started = performance.now();
  const random = mulberry32(20_260_101);
  const text = new TextGenerator(random);
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);

  const posts = Array.from({ length: options.posts }, (_, i) => {
    const title = text.title();
    // About one post in 277 mentions the common word and three posts the rare one: "a few dozen" and "a few".
    const planted = i % 277 === 13 ? COMMON_WORD : [1_234, 5_678, 9_012].includes(i) ? RARE_WORD : undefined;
    const publishedMs = now - i * 3_197_123;
    return {
      slug: `${slugify(title).slice(0, 70).replace(/-+$/, '')}-${i + 1}`,
      title,
      description: text.description(),
      content: text.markdown(title, 1_000 + Math.floor(random() * 2_000), planted),
      authorName: text.pick(AUTHORS),
      tags: text.some(TAGS, 1 + Math.floor(random() * 4)),
      status: 'published',
      ogImageUrl: random() < 0.5 ? `https://cdn.example.com/og/post-${i + 1}.png` : null,
      publishedAt: microIso(publishedMs, i),
      createdAt: microIso(publishedMs - 86_400_000 - Math.floor(random() * 864_000_000), i),
      updatedAt: microIso(publishedMs + Math.floor(random() * 3_600_000), i),
    };
  });
  for (const batch of chunks(posts, 250)) await database.db.insert(blogPosts).values(batch);

  const items = Array.from({ length: options.items }, (_, i) => {
    const title = text.roadmapTitle();
    const status = text.weighted(ROADMAP_STATUS_WEIGHTS);
    const updatedMs = now - i * 7_654_321;
    return {
      slug: `${slugify(title).slice(0, 70).replace(/-+$/, '')}-${i + 1}`,
      title,
      description: text.paragraphs(200 + Math.floor(random() * 600)),
      summary: text.sentence(),
      category: text.pick(ROADMAP_CATEGORIES),
      status,
      priority: text.pick(ROADMAP_PRIORITIES),
      quarter: `Q${1 + Math.floor(random() * 4)} ${2025 + Math.floor(random() * 2)}`,
      public: random() < 0.9,
      shippedAt: status === 'shipped' ? microIso(updatedMs, i) : null,
      votes: Math.floor(random() ** 3 * 300),
      createdAt: microIso(updatedMs - 90 * 86_400_000, i),
      updatedAt: microIso(updatedMs, i),
    };
  });
  const inserted: { id: number }[] = [];
  for (const batch of chunks(items, 250)) {
    inserted.push(...(await database.db.insert(roadmapItems).values(batch).returning({ id: roadmapItems.id })));
  }
  const votes = items.flatMap((item, i) =>
    Array.from({ length: item.votes }, (_, n) => ({ itemId: inserted[i].id, voterId: `seed-voter-${n}` })),
  );
  for (const batch of chunks(votes, 5_000)) await database.db.insert(roadmapVotes).values(batch);

  // The public changelog: a release every other week or so, each with a few highlights and a Markdown body.
  const entries = Array.from({ length: CHANGELOG_ENTRIES }, (_, i) => {
    const publishedMs = now - i * 1_209_600_000;
    const version = `v${Math.floor((CHANGELOG_ENTRIES - i) / 10) + 1}.${(CHANGELOG_ENTRIES - i) % 10}.0`;
    return {
      slug: slugify(version),
      version,
      title: text.title(),
      summary: text.sentence(),
      content: text.markdown(version, 600 + Math.floor(random() * 1_200)),
      type: text.pick(['release', 'release', 'release', 'hotfix', 'beta'] as const),
      highlights: Array.from({ length: 1 + Math.floor(random() * 4) }, () => text.sentence()),
      status: 'published',
      publishedAt: microIso(publishedMs, i),
      createdAt: microIso(publishedMs - 86_400_000, i),
      updatedAt: microIso(publishedMs, i),
    };
  });
  await database.db.insert(changelogEntries).values(entries);

  // PostgreSQL's autovacuum vacuums and analyzes freshly loaded tables within a minute or so: do it now, so the
  // run does not race it. PGlite runs no autovacuum and Atrium does not maintain it (no VACUUM, no ANALYZE),
  // so the embedded database is measured as it would run.
  // Only the loaded tables: a database-wide VACUUM also walks other runs' scratch schemas and fails when one of
  // them is dropped meanwhile.
  if (database.engine === 'postgres') await database.db.execute(sql`VACUUM ANALYZE blog_posts, changelog_entries, roadmap_items, roadmap_votes`);

  const countPosts = async (word: string) => {
    const [row] = await database.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM blog_posts WHERE search_text LIKE ${`%${word}%`}`,
    );
    return row.n;
  };
  return {
    posts: posts.length,
    items: items.length,
    votes: votes.length,
    votableSlugs: items.filter((item) => item.public && VOTABLE.has(item.status)).map((item) => item.slug),
    search: {
      common: { word: COMMON_WORD, posts: await countPosts(COMMON_WORD) },
      rare: { word: RARE_WORD, posts: await countPosts(RARE_WORD) },
    },
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** Published changelog entries: a fixed number, whatever the number of posts (the public list shows 20). */
const CHANGELOG_ENTRIES = 60;

const VOTABLE = new Set(['planned', 'in_progress', 'considering']);
const ROADMAP_STATUS_WEIGHTS = { planned: 30, in_progress: 20, shipped: 25, considering: 20, cancelled: 5 };

/** A timestamp unique per row: the row's millisecond plus three sub-millisecond digits, as orderedNow() writes. */
function microIso(ms: number, row: number): string {
  return new Date(ms).toISOString().replace('Z', `${String((row * 7_919) % 1_000).padStart(3, '0')}Z`);
}

function chunks<T>(rows: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size));
}

/** A small, fast, seedable PRNG (public domain), so every run loads identical data. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const AUTHORS = ['The Atrium Team', 'Maya Lindqvist', 'Tomás Ferreira', 'Aiko Tanaka', 'Priya Raman', 'Jonas Weber', 'Chloé Martin', 'Samuel Okafor'];
const TAGS = [
  'engineering', 'product', 'release', 'postgres', 'performance', 'security', 'design', 'api', 'mcp', 'agents',
  'search', 'infrastructure', 'testing', 'typescript', 'node', 'accessibility', 'billing', 'migrations',
  'roadmap', 'community', 'open-source', 'caching', 'reliability', 'onboarding', 'docs', 'integrations',
  'mobile', 'analytics', 'privacy', 'culture',
];
// Neither COMMON_WORD nor RARE_WORD may occur inside any of these.
const NOUNS = [
  'cache', 'database', 'queue', 'worker', 'deploy', 'release', 'feature', 'customer', 'team', 'service',
  'endpoint', 'schema', 'migration', 'index', 'query', 'latency', 'budget', 'roadmap', 'changelog', 'editor',
  'workflow', 'review', 'draft', 'agent', 'token', 'session', 'permission', 'dashboard', 'report', 'template',
  'webhook', 'integration', 'pipeline', 'build', 'test', 'bug', 'incident', 'outage', 'metric', 'alert',
  'region', 'cluster', 'container', 'image', 'upload', 'asset', 'search', 'filter', 'cursor', 'page',
  'component', 'design', 'prototype', 'experiment', 'launch', 'pricing', 'invoice', 'account', 'organization', 'space',
];
const VERBS = [
  'ship', 'build', 'scale', 'measure', 'debug', 'rewrite', 'cache', 'migrate', 'design', 'test', 'launch',
  'simplify', 'automate', 'secure', 'document', 'review', 'index', 'profile', 'refactor', 'replace',
];
const ADJECTIVES = [
  'fast', 'slow', 'reliable', 'simple', 'new', 'old', 'small', 'large', 'public', 'private', 'shared', 'careful',
  'quiet', 'busy', 'clear', 'stable', 'early', 'late', 'better', 'faster', 'safer', 'cheaper', 'boring', 'honest',
];
const FILLER = [
  'the', 'a', 'we', 'our', 'it', 'this', 'that', 'with', 'for', 'from', 'into', 'when', 'because', 'so', 'and',
  'but', 'then', 'every', 'each', 'most', 'some', 'after', 'before', 'while', 'without', 'again', 'now', 'still',
  'only', 'also', 'first', 'next', 'last', 'one', 'two', 'three', 'many', 'few', 'more', 'less', 'how', 'why',
];

class TextGenerator {
  constructor(private readonly random: () => number) {}

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)];
  }

  some<T>(list: readonly T[], count: number): T[] {
    const chosen = new Set<T>();
    while (chosen.size < count) chosen.add(this.pick(list));
    return [...chosen];
  }

  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as [K, number][];
    let roll = this.random() * entries.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [key, weight] of entries) if ((roll -= weight) < 0) return key;
    return entries[entries.length - 1][0];
  }

  title(): string {
    const shapes = [
      () => `How we ${this.pick(VERBS)} the ${this.pick(NOUNS)} ${this.pick(NOUNS)}`,
      () => `${capital(this.pick(ADJECTIVES))} ${this.pick(NOUNS)}s: what we learned in ${2019 + Math.floor(this.random() * 7)}`,
      () => `Why our ${this.pick(NOUNS)} is ${this.pick(ADJECTIVES)} now`,
      () => `${capital(this.pick(VERBS))} your ${this.pick(NOUNS)} without a ${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}`,
      () => `A ${this.pick(ADJECTIVES)} guide to ${this.pick(NOUNS)} ${this.pick(NOUNS)}s`,
    ];
    return this.pick(shapes)();
  }

  roadmapTitle(): string {
    const shapes = [
      () => `${capital(this.pick(ADJECTIVES))} ${this.pick(NOUNS)} for every ${this.pick(NOUNS)}`,
      () => `Support ${this.pick(NOUNS)}s in the ${this.pick(NOUNS)} ${this.pick(NOUNS)}`,
      () => `${capital(this.pick(VERBS))} ${this.pick(NOUNS)} ${this.pick(NOUNS)}s`,
    ];
    return this.pick(shapes)();
  }

  /** One sentence of 8–16 words, optionally with `planted` as one of them. */
  sentence(planted?: string): string {
    const length = 8 + Math.floor(this.random() * 9);
    const words = Array.from({ length }, (_, i) =>
      i % 3 === 1 ? this.pick(NOUNS) : i % 5 === 2 ? this.pick(ADJECTIVES) : i % 4 === 3 ? this.pick(VERBS) : this.pick(FILLER),
    );
    if (planted) words[Math.floor(length / 2)] = planted;
    return `${capital(words.join(' '))}.`;
  }

  /** An SEO description: one or two sentences, 50–160 characters (spec section 8). */
  description(): string {
    let text = this.sentence();
    while (text.length < 60) text = `${text} ${this.sentence()}`;
    return text.length <= 160 ? text : `${text.slice(0, 157).replace(/\s+\S*$/, '')}...`;
  }

  paragraphs(characters: number, planted?: string): string {
    const paragraphs: string[] = [];
    let total = 0;
    while (total < characters) {
      const count = 3 + Math.floor(this.random() * 4);
      const paragraph = Array.from({ length: count }, (_, i) => this.sentence(i === 1 && paragraphs.length === 0 ? planted : undefined)).join(' ');
      paragraphs.push(paragraph);
      total += paragraph.length + 2;
    }
    return paragraphs.join('\n\n');
  }

  /** A Markdown body of about `characters` characters: sections, paragraphs, a list, now and then code. */
  markdown(title: string, characters: number, planted?: string): string {
    const parts = [`# ${title}`, this.paragraphs(characters * 0.4, planted), `## ${capital(this.pick(VERBS))} the ${this.pick(NOUNS)}`];
    parts.push(Array.from({ length: 3 }, () => `- ${this.sentence()}`).join('\n'));
    if (this.random() < 0.3) parts.push('```ts\nconst result = await db.select().from(posts).limit(20);\n```');
    parts.push(this.paragraphs(characters * 0.4));
    return parts.join('\n\n');
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
