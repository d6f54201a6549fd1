/**
 * Pieces the console's record pages share (operations, agents, capabilities): a status badge, a time, JSON shown
 * bounded, the "Older" link of a keyset-paged list, the filters' query fields, and the not-found answer.
 */
import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { toIso } from '../../platform/time.js';
import { id } from '../fields.js';
import type { ConsolePage } from './console.js';
import { formatTime } from './format.js';

/** A status, verdict or risk as a coloured word (console.css `.badge <value>`). */
export function Badge({ value }: { value: string }): VNode {
  return <span class={`badge ${value}`}>{value.replace(/_/g, ' ')}</span>;
}

/** A stored timestamp (PostgreSQL's text form or ISO) for people, machine-readable in `datetime`. */
export function Time({ value }: { value: string | null | undefined }): VNode {
  if (!value) return <span class="muted">—</span>;
  const iso = toIso(value);
  return <time dateTime={iso}>{formatTime(iso)}</time>;
}

/** JSON as people read it, cut at `limit` characters (a result may be up to a MiB) with a note saying so. */
export function BoundedJson({ value, limit = 4096 }: { value: unknown; limit?: number }): VNode {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  if (text.length <= limit) return <pre><code>{text}</code></pre>;
  return (
    <>
      <pre><code>{`${text.slice(0, limit)}…`}</code></pre>
      <p class="muted">
        Shortened: the first {limit.toLocaleString('en')} of {text.length.toLocaleString('en')} characters are shown.
      </p>
    </>
  );
}

/** The link to the next (older) page of a list, when there is one. */
export function Pager({ next, label = 'Older' }: { next: string | null; label?: string }): VNode | null {
  if (!next) return null;
  return (
    <nav class="pager" aria-label="More">
      <span />
      <a href={next} rel="next">
        {label}
      </a>
    </nav>
  );
}

/** `path` with the query's non-empty fields. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** A filter of a GET form: an empty choice ("any") is no filter. */
export function choice<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

/** An id chosen in a filter. */
export const idChoice = () => choice(id());

/** An unknown id and one outside the reader's scope get the same answer. */
export function notFound(reply: FastifyReply, what: string, back: { href: string; name: string }): ConsolePage {
  reply.code(404);
  return {
    title: 'Not found',
    body: (
      <>
        <h1>Not found</h1>
        <p>
          There is no {what} with this id that you can see. <a href={back.href}>Back to {back.name}</a>
        </p>
      </>
    ),
  };
}
