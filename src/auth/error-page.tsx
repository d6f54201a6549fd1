/**
 * The page a person sees when an authorization request cannot even be answered with a redirect (RFC 6749
 * §4.1.2.1: an unknown client, a redirect URI that does not match). The authorization server serves it on
 * whichever service hosts it, so it brings its own few styles (as attributes: its CSP allows inline styles
 * and nothing else) rather than a host's stylesheet. preact-render-to-string escapes what the client sent.
 */
import { render } from 'preact-render-to-string';
import type { OAuthError } from './errors.js';

const BODY_STYLE = { fontFamily: 'system-ui, sans-serif', maxWidth: '36rem', margin: '4rem auto', padding: '0 1rem', lineHeight: 1.5 };
const CODE_STYLE = { background: '#f2f2f2', padding: '0 .25rem' };

export function renderAuthorizationErrorPage(error: OAuthError): string {
  return `<!doctype html>\n${render(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Cannot connect this application</title>
      </head>
      <body style={BODY_STYLE}>
        <h1>Cannot connect this application</h1>
        <p>The application sent a request this server cannot accept, so you were not sent back to it.</p>
        <p>
          <code style={CODE_STYLE}>{error.code}</code>: {error.message}
        </p>
        <p>Close this window and tell the application's developer.</p>
      </body>
    </html>,
  )}\n`;
}
