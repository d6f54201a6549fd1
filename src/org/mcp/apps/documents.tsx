/**
 * The three MCP Apps documents (io.modelcontextprotocol/ui, spec 2026-01-26 "UI Resource Format"): one
 * self-contained HTML5 page each, rendered once at start-up with preact-render-to-string (which escapes what it
 * is given), with the shared stylesheet and script inlined — the host's default CSP allows inline code and no
 * network, and the pages need none: every fact comes from the tool result the host hands them.
 */
import { readFileSync } from 'node:fs';
import { render } from 'preact-render-to-string';

const style = readFileSync(new URL('./app.css', import.meta.url), 'utf8');
const script = readFileSync(new URL('./app.js', import.meta.url), 'utf8');

/** Which view the shared script draws: `data-app` on the body. */
export type AppView = 'approval' | 'timeline' | 'tasks';

export function renderAppDocument(view: AppView, title: string): string {
  return `<!doctype html>\n${render(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <style dangerouslySetInnerHTML={{ __html: style }} />
      </head>
      <body data-app={view}>
        <main>
          <h1>{title}</h1>
          <p id="status" role="status">
            Waiting for the result…
          </p>
          <div id="view" />
        </main>
        <script dangerouslySetInnerHTML={{ __html: script }} />
      </body>
    </html>,
  )}`;
}
