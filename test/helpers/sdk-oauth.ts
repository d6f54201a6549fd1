/**
 * The pieces a real MCP client application has, for the end-to-end OAuth tests: an in-memory
 * `OAuthClientProvider` for the SDK client, a loopback HTTP server receiving the authorization callback,
 * and a real headless Chromium (Debian's /usr/bin/chromium, fresh profile) that the person uses.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export class TestOAuthProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  readonly expectedState = randomBytes(16).toString('hex');
  private information?: StoredOAuthClientInformation;
  private stored?: StoredOAuthTokens;
  private verifier?: string;
  private discovery?: OAuthDiscoveryState;
  /** Resolves with the authorization URL when the SDK sends the person off to authorize. */
  readonly authorizationRequested: Promise<URL>;
  private onAuthorizationRequested!: (url: URL) => void;

  constructor(
    readonly redirectUrl: string,
    private readonly name: string,
    /** A client ID metadata document URL to use as client_id instead of registering. */
    clientIdUrl?: string,
  ) {
    if (clientIdUrl) this.information = { client_id: clientIdUrl };
    this.authorizationRequested = new Promise((resolve) => (this.onAuthorizationRequested = resolve));
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: StoredOAuthClientInformation) {
    this.information = information;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    this.onAuthorizationRequested(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A loopback server standing in for the client's redirect URI; `next()` resolves with the next callback. */
export async function startCallbackServer() {
  let deliver: (params: URLSearchParams) => void = () => {};
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    if (url.pathname === '/callback') deliver(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    next: () => new Promise<URLSearchParams>((resolve) => (deliver = resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface PersonBrowser {
  page: Page;
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, as DESIGN 7 prescribes (never a downloaded browser). */
export async function openBrowser(): Promise<PersonBrowser> {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** The person signs in on the sign-in page the browser is on, by its accessible names. */
export async function signInAs(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
