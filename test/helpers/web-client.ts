/**
 * A browser without a browser: fetch with a cookie jar and no automatic redirects, for the page tests
 * that check exact statuses and headers (the real Chromium runs in the OAuth end-to-end tests).
 */
export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class Browserless {
  constructor(
    private readonly origin: string,
    private readonly cookies = new Map<string, string>(),
    /** Sent with every request, e.g. X-Forwarded-For behind a trusted proxy. */
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  /** The same browser (same cookie jar) talking to another origin, e.g. a second process. */
  at(origin: string): Browserless {
    return new Browserless(origin, this.cookies, this.extraHeaders);
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(path: string): Promise<PageResponse> {
    return this.send('GET', path);
  }

  /** A form post; a list value is sent once per item, as ticked checkboxes are. */
  async post(path: string, form: Record<string, string | readonly string[]>): Promise<PageResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) for (const item of typeof value === 'string' ? [value] : value) body.append(name, item);
    return this.send('POST', path, body.toString());
  }

  /** Loads the sign-in page for its CSRF token and submits it. */
  async signIn(email: string, password: string, returnTo?: string): Promise<PageResponse> {
    const page = await this.get('/signin');
    const form: Record<string, string> = { email, password, csrf: this.hidden(page.text, 'csrf') };
    if (returnTo !== undefined) form.return_to = returnTo;
    return this.post('/signin', form);
  }

  /** The value of the first hidden input with that name. */
  hidden(html: string, name: string): string {
    const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html);
    if (!match) throw new Error(`no hidden field ${name} in page`);
    // The entities preact-render-to-string writes in attribute values.
    const entities: Record<string, string> = { '&quot;': '"', '&lt;': '<', '&amp;': '&' };
    return match[1].replace(/&(?:quot|lt|amp);/g, (entity) => entities[entity]);
  }

  private async send(method: string, path: string, body?: string): Promise<PageResponse> {
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (this.cookies.size) headers.cookie = this.cookieHeader();
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(new URL(path, this.origin), { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = attributes.some((attribute) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attribute));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
}

/** A Browserless signed in as `person` at `origin`; throws when the sign-in is refused. */
export async function signedInBrowserless(origin: string, person: { email: string; password: string }): Promise<Browserless> {
  const browser = new Browserless(origin);
  const answer = await browser.signIn(person.email, person.password);
  if (answer.status !== 303) throw new Error(`${person.email} could not sign in: ${answer.status}`);
  return browser;
}
