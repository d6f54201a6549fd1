/**
 * Server-rendered HTML with escaping by default: every value interpolated into `html` is escaped unless
 * it is itself `html` output, so a client name or email can never become markup.
 */
import { createHash } from 'node:crypto';

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolation = SafeHtml | string | number | null | undefined | false | readonly Interpolation[];

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  return new SafeHtml(strings.reduce((out, text, index) => out + text + (index < values.length ? render(values[index]) : ''), ''));
}

/** A timestamp for people: `2026-03-04 10:30:00 UTC`, or a dash when there is none. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/** The only stylesheet, inline; the CSP allows exactly this text by its hash. */
const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
  body { margin: 0; }
  header, main { max-width: 48rem; margin: 0 auto; padding: 1rem; box-sizing: border-box; }
  header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; justify-content: space-between; align-items: center; border-bottom: 1px solid #8884; }
  header form { margin: 0; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; min-width: 0; }
  header form span { overflow-wrap: anywhere; }
  header button { margin-top: 0; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input[type=email], input[type=password] { display: block; width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
  button { margin-top: 1rem; padding: .5rem 1.25rem; font: inherit; cursor: pointer; }
  .error { border: 1px solid #c00; padding: .5rem 1rem; }
  .actions { display: flex; gap: 1rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .5rem; border-bottom: 1px solid #8884; vertical-align: top; overflow-wrap: break-word; }
  td button { white-space: nowrap; }
  td ul { margin: 0; padding-left: 1.1rem; }
  /* Narrow screens: each row becomes a card, each cell labelled by its column (data-label). */
  @media (max-width: 40rem) {
    table.stack, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; }
    table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
    table.stack tr { border-bottom: 1px solid #8884; padding: .5rem 0; }
    table.stack th, table.stack td { border: 0; padding: .25rem 0; }
    table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  }
  dt { font-weight: 600; font-family: ui-monospace, monospace; }
  dd { margin: 0 0 .75rem 0; }
  nav { display: flex; gap: 1rem; }
  textarea, input[type=date] { display: block; width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
  label.inline { display: inline; font-weight: normal; margin: 0; }
  pre { white-space: pre-wrap; word-break: break-word; margin: 0; }
  pre.snippet { padding: .75rem; border: 1px solid #8884; border-radius: .25rem; }
  .tool-index ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; list-style: none; }
  .tool { border-top: 1px solid #8884; padding-top: .25rem; }
  .tool h2 { font-size: 1.15rem; margin: .75rem 0 .25rem; overflow-wrap: anywhere; }
  .tool p { margin: .25rem 0; overflow-wrap: anywhere; }
  .tool details { margin: .25rem 0 .75rem; }
  .tool details pre { padding: .5rem; border: 1px solid #8884; border-radius: .25rem; font-size: .85rem; }
  fieldset.scopes { border: 1px solid #8884; border-radius: .25rem; }
  fieldset.scopes p { margin: .5rem 0; }
  .warning { color: #a33; }
  @media (prefers-color-scheme: dark) { .warning { color: #f99; } }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /**
   * When someone is signed in: their name and the CSRF token for the sign-out form; on the person's own
   * pages also the count of what the inbox waits for (decisions and task questions), shown beside the navigation.
   */
  signedIn?: { name: string; csrf: string; pending?: number };
}

export function page({ title, body, signedIn }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Atrium</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<header>
<strong>Atrium</strong>
${signedIn?.pending !== undefined
  ? html`<nav aria-label="Your pages"><a href="/inbox">Inbox${signedIn.pending ? html` <span aria-label="${signedIn.pending} pending">(${signedIn.pending})</span>` : ''}</a><a href="/rules">Rules</a><a href="/connections">Connections</a><a href="/account">Account</a></nav>`
  : ''}
${signedIn
  ? html`<form method="post" action="/signout"><span>${signedIn.name}</span> <input type="hidden" name="csrf" value="${signedIn.csrf}"> <button type="submit">Sign out</button></form>`
  : ''}
</header>
<main>
${body}
</main>
</body>
</html>
`.value;
}
