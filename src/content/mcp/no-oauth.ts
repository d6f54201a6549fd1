/**
 * The content MCP server is not an OAuth protected resource: its bearer token is the content API secret
 * (DESIGN 3). An MCP client that meets a 401 looks for OAuth anyway — protected resource metadata (RFC 9728
 * §3), authorization server metadata (RFC 8414 §3, OpenID Connect Discovery), and, finding none, the MCP
 * specification's default endpoints `/register`, `/authorize` and `/token` on the server's origin. Each of
 * those answers 404, as any unknown route does, but with a message naming what to send instead, so the
 * client's error says how to connect rather than "no route for POST /register".
 */
import type { HttpServer } from '../../platform/http.js';
import { contentErrors } from '../errors.js';

const DISCOVERY = ['oauth-protected-resource', 'oauth-authorization-server', 'openid-configuration'];

export function registerNoOAuth(app: HttpServer): void {
  const refuse = async (request: { method: string; url: string }) => {
    throw contentErrors.noOAuth(request.method, request.url.split('?')[0]);
  };
  for (const name of DISCOVERY) {
    app.get(`/.well-known/${name}`, { schema: { hide: true } }, refuse);
    app.get(`/.well-known/${name}/*`, { schema: { hide: true } }, refuse);
  }
  app.get('/mcp/.well-known/openid-configuration', { schema: { hide: true } }, refuse);
  app.post('/register', { schema: { hide: true } }, refuse);
  app.get('/authorize', { schema: { hide: true } }, refuse);
  app.post('/token', { schema: { hide: true } }, refuse);
}
