/**
 * The document every page is rendered into: Pico's classless stylesheet and the console's own, both served
 * from this origin (assets.ts), the console navigation for a signed-in person, and the page's content.
 * Pages are preact components rendered to a string on the server (preact-render-to-string), which escapes
 * every text and attribute value; there is no string-built HTML.
 */
import type { ComponentChildren, VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { assetUrl } from './assets.js';

/** The console's sections, in the navigation's order. */
export const CONSOLE_SECTIONS = [
  { path: '/', name: 'Home' },
  { path: '/inbox', name: 'Inbox' },
  { path: '/ask', name: 'Ask' },
  { path: '/activity', name: 'Activity' },
  { path: '/operations', name: 'Operations' },
  { path: '/agents', name: 'Agents' },
  { path: '/capabilities', name: 'Capabilities' },
  { path: '/memory', name: 'Memory' },
  { path: '/tasks', name: 'Tasks' },
  { path: '/people', name: 'People' },
  // Where the organization's events go (web/events.tsx): owners and admins only, so only they are shown the link.
  { path: '/events', name: 'Events', admins: true },
  // The organization settings (web/settings.tsx): owners and admins only, like Events.
  { path: '/settings', name: 'Settings', admins: true },
  { path: '/account', name: 'Account' },
] as const satisfies readonly { path: string; name: string; admins?: boolean }[];

export interface SignedIn {
  name: string;
  /** The CSRF token of the sign-out form. */
  csrf: string;
  /** What the inbox waits for (decisions and task questions); shown beside the navigation. */
  pending?: number;
  /** The path of the page, so its section is marked current in the navigation. */
  current?: string;
  /** The sections this service serves (a section not built in is not linked). */
  sections?: readonly { path: string; name: string }[];
}

export interface PageProps {
  title: string;
  signedIn?: SignedIn;
  children: ComponentChildren;
}

function Navigation({ signedIn }: { signedIn: SignedIn }): VNode {
  const sections = signedIn.sections ?? CONSOLE_SECTIONS;
  const current = sections
    .filter((section) => signedIn.current === section.path || (section.path !== '/' && signedIn.current?.startsWith(`${section.path}/`)))
    .at(0)?.path;
  return (
    <nav class="console" aria-label="Console">
      <ul>
        {sections.map((section) => (
          <li key={section.path}>
            <a href={section.path} aria-current={section.path === current ? 'page' : undefined}>
              {section.name}
              {section.path === '/inbox' && signedIn.pending !== undefined ? (
                <>
                  {' '}
                  <span class="count" data-pending-count="" hidden={signedIn.pending === 0}>
                    {signedIn.pending}
                    <span class="visually-hidden"> pending</span>
                  </span>
                </>
              ) : null}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function Page({ title, signedIn, children }: PageProps): VNode {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${title} · Atrium`}</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrl('pico.css')} />
        <link rel="stylesheet" href={assetUrl('console.css')} />
        {signedIn?.pending !== undefined ? <script type="module" src={assetUrl('console.js')} /> : null}
      </head>
      <body>
        <header>
          <div class="topbar">
            <a href="/">Atrium</a>
            {signedIn ? (
              <form method="post" action="/signout">
                <span>{signedIn.name}</span>
                <input type="hidden" name="csrf" value={signedIn.csrf} />
                <button type="submit" class="secondary">
                  Sign out
                </button>
              </form>
            ) : null}
          </div>
          {signedIn?.pending !== undefined ? <Navigation signedIn={signedIn} /> : null}
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}

/** The whole document as a string. */
export function renderPage(props: PageProps): string {
  return `<!doctype html>\n${render(<Page {...props} />)}`;
}
