/**
 * A minimal MCP Apps host for tests (issue 21 item 8): a page on its own origin, served with the restrictive CSP
 * the Apps spec asks hosts to give a view that declares no domains (so an app that fetched anything would fail),
 * whose script (app-host-page.ts, bundled here with esbuild) is the extension's own `AppBridge`. The test hands it
 * an app resource read through the official client and a real tool result; `checkAppFrame` is page-check.ts's
 * check for the rendered view inside its iframe.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import type { Frame, Page } from 'playwright-core';
import { checkAtWidths } from './page-check.js';

/** Spec 2026-01-26 "Host Behavior": the default when a resource declares no `ui.csp`. */
const VIEW_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Test host</title>
<style>body { margin: 0; font-family: system-ui, sans-serif; } main { padding: 0.5rem; } iframe { width: 100%; border: 0; display: block; }</style>
</head><body><main><h1>Test host</h1></main><script src="/host.js"></script></body></html>`;

export interface AppHost {
  url: string;
  /** The URLs the apps asked the host to open (`ui/open-link`), in order. */
  links: string[];
  /**
   * Opens the host in `page` and renders `html` with the tool's input and result; the view's `tools/call`
   * requests go to `callTool`. Resolves with the view's frame once it has the result.
   */
  render(page: Page, app: { html: string; toolInput: Record<string, unknown>; toolResult: CallToolResult; callTool?: (params: { name: string; arguments?: Record<string, unknown> }) => Promise<CallToolResult> }): Promise<Frame>;
  close(): Promise<void>;
}

export async function startAppHost(): Promise<AppHost> {
  const bundle = await build({
    entryPoints: [path.join(import.meta.dirname, 'app-host-page.ts')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
  });
  const script = bundle.outputFiles[0].text;
  const server = http.createServer((request, response) => {
    if (request.url === '/host.js') return response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    // A srcdoc iframe inherits its parent's policy, so the view runs under exactly this one.
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': VIEW_CSP }).end(HOST_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const links: string[] = [];
  return {
    url,
    links,
    async render(page, { html, toolInput, toolResult, callTool }) {
      await page.exposeFunction('hostOpenLink', (link: string) => void links.push(link));
      await page.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) => {
        if (!callTool) throw new Error(`the view called ${params.name}, which this test does not expect`);
        return callTool(params);
      });
      await page.goto(url);
      await page.evaluate(([html, input, result]) => (window as unknown as { renderApp(...args: unknown[]): Promise<void> }).renderApp(html, input, result), [html, toolInput, toolResult] as const);
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      if (!frame) throw new Error('the host rendered no view');
      return frame;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * page-check.ts's check for a view in its iframe: at a desktop's and a phone's width, axe-core inside the frame
 * finds nothing serious or critical and the view does not scroll sideways; screenshots of the host page are
 * saved as <name>-desktop.png and <name>-phone.png.
 */
export async function checkAppFrame(page: Page, frame: Frame, name: string): Promise<void> {
  const problems = await checkAtWidths(page, frame, name, () => page.waitForTimeout(100));
  if (problems.length) throw new Error(`${problems.length} problem(s) in ${name}:\n${problems.join('\n')}`);
}
