/**
 * Mints an access token for the org MCP endpoint through the real OAuth flow, as a browser and a client
 * would walk it: dynamic registration, authorize (PKCE S256, resource), the sign-in page, the consent page's
 * Allow (both with their CSRF tokens and cookies), and the code exchange. No shortcut into the database.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface MintOptions {
  /** The org service's public URL (authorization server on the same origin). */
  origin: string;
  email: string;
  password: string;
  scopes: readonly string[];
  clientName: string;
}

const REDIRECT_URI = 'http://127.0.0.1/callback';

export async function mintOrgToken(options: MintOptions): Promise<string> {
  const { origin } = options;
  const resource = `${origin}/mcp`;
  const cookies = new Map<string, string>();
  const browse = async (path: string, form?: Record<string, string> | URLSearchParams) => {
    const response = await fetch(new URL(path, origin), {
      method: form ? 'POST' : 'GET',
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form) : undefined,
      redirect: 'manual',
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      cookies.set(pair.slice(0, index), pair.slice(index + 1));
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  };
  const hidden = (html: string, name: string) => {
    const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
    if (!match) throw new Error(`no ${name} field on the page`);
    return match[1].replace(/&#(\d+);/g, (_all, code) => String.fromCharCode(Number(code)));
  };

  const registered = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: options.clientName, redirect_uris: [REDIRECT_URI] }),
  });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };

  const verifier = randomBytes(32).toString('base64url');
  const authorize = await browse(
    `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: randomBytes(8).toString('hex'),
      resource,
      scope: options.scopes.join(' '),
    })}`,
  );
  if (authorize.status !== 302 || !authorize.location) throw new Error(`authorize failed: ${authorize.status}`);
  const consentUrl = new URL(authorize.location, origin);
  const consentPath = consentUrl.pathname + consentUrl.search;

  const signInPage = await browse(`/signin?${new URLSearchParams({ return_to: consentPath })}`);
  const signedIn = await browse('/signin', {
    email: options.email,
    password: options.password,
    csrf: hidden(signInPage.text, 'csrf'),
    return_to: consentPath,
  });
  if (signedIn.status !== 303) throw new Error(`sign-in failed: ${signedIn.status}`);

  const consent = await browse(consentPath);
  // The person ticks every scope the page offers (the consequential ones start unticked).
  const answerForm = new URLSearchParams({ csrf: hidden(consent.text, 'csrf'), request: hidden(consent.text, 'request'), decision: 'allow' });
  for (const scope of options.scopes) answerForm.append('scope', scope);
  const answer = await browse('/consent', answerForm);
  const code = answer.location && new URL(answer.location).searchParams.get('code');
  if (!code) throw new Error(`consent failed: ${answer.status}`);

  const token = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource }),
  });
  if (token.status !== 200) throw new Error(`token exchange failed: ${token.status} ${await token.text()}`);
  return ((await token.json()) as { access_token: string }).access_token;
}
