/**
 * GET /rules and POST /rules/revoke (DESIGN 4.4, 4.6): the rules the organization learned from decisions
 * approved "and remembered", over agents the signed-in person governs, each with Revoke. The organization
 * file's own rules are not listed here: they change with the file.
 */
import type { FastifyInstance } from 'fastify';
import { listLearnedRules, revokeLearnedRule, type LearnedRuleRecord } from '../rules/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formatTime } from './format.js';
import { formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';

export function registerRulesPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/rules', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/rules'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const rules = await listLearnedRules(ctx.db, session.person);
    const body = <LearnedRules rules={rules} csrf={csrf} />;
    return sendPersonalPage(web, reply, session, csrf, 'Learned rules', body);
  });

  app.post('/rules/revoke', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/rules'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const ruleId = formField(request.body, 'rule_id');
    if (ruleId) await revokeLearnedRule(ctx.db, ruleId, session.person);
    return reply.redirect('/rules', 303);
  });
}

function LearnedRules({ rules, csrf }: { rules: LearnedRuleRecord[]; csrf: string }) {
  return (
    <>
      <h1>Learned rules</h1>
      <p>Approving a decision with "remember" lets that agent run that capability without asking again. Revoke a rule to be asked again.</p>
      {rules.length ? (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Capability</th>
              <th scope="col">Arguments</th>
              <th scope="col">Until</th>
              <th scope="col">Learned</th>
              <th scope="col">
                <span class="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.map((rule) => (
              <tr key={rule.id}>
                <th scope="row">{rule.agent.name}</th>
                <td data-label="Capability">{rule.capability.name}</td>
                <td data-label="Arguments">{rule.input === null ? 'any' : <pre>{JSON.stringify(rule.input, null, 2)}</pre>}</td>
                <td data-label="Until">{rule.until ? formatTime(rule.until) : 'no end'}</td>
                <td data-label="Learned">
                  {formatTime(rule.created_at)}
                  {rule.created_by ? ` by ${rule.created_by}` : null}
                </td>
                <td>
                  <form method="post" action="/rules/revoke">
                    <input type="hidden" name="csrf" value={csrf} />
                    <input type="hidden" name="rule_id" value={rule.id} />
                    <button type="submit" aria-label={`Revoke: ${rule.agent.name} may ${rule.capability.name}`}>
                      Revoke
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No learned rules.</p>
      )}
    </>
  );
}
