/** Signing in to the org console as a person does, for the benchmarks that time its pages. */

/** A signed-in browser's cookie header, from the sign-in form as a person submits it. */
export async function signIn(url: string, email: string, password: string): Promise<string> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const header = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const form = await fetch(`${url}/signin`);
  remember(form);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error('no CSRF token on the sign-in page');
  const answer = await fetch(`${url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: header() },
    body: new URLSearchParams({ email, password, csrf }),
  });
  remember(answer);
  if (answer.status !== 303) throw new Error(`sign-in of ${email} answered ${answer.status}`);
  return header();
}
