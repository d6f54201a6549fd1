/**
 * GET /rules and POST /rules/revoke (DESIGN 4.4, 4.6): the standing rules the gate applies (standing-rules.tsx:
 * the organization file's and the console's, which owners and admins manage there), then the rules the
 * organization learned from decisions approved "and remembered", over agents the signed-in person governs, each
 * with Revoke.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { shadowFirings } from '../capabilities/verdicts.js';
import { listLearnedRules, revokeLearnedRule, type LearnedRuleRecord } from '../rules/records.js';
import { listStandingRules } from '../rules/standing.js';
import { consolePage } from './console.js';
import { checkCsrfToken } from './csrf.js';
import { formatTime } from './format.js';
import { ColumnHeads, optionalField } from './parts.js';
import { formField, sendCsrfFailure, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';
import { registerStandingRulePages, RULES_DONE, SHADOW_DAYS, StandingRules } from './standing-rules.js';

const rulesQuery = z.object({ done: optionalField(z.enum(Object.keys(RULES_DONE) as [string, ...string[]])) });

export function registerRulesPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;
  registerStandingRulePages(app, web);

  consolePage(app, web, '/rules', rulesQuery, async (viewer, { query }) => {
    const [standing, fired, learned] = await Promise.all([
      listStandingRules(ctx.db),
      shadowFirings(ctx.db, viewer.scope, null, SHADOW_DAYS),
      listLearnedRules(ctx.db, viewer.person),
    ]);
    return {
      title: 'Rules',
      body: (
        <>
          <h1>Rules</h1>
          {query.done ? <p role="status">{RULES_DONE[query.done]}</p> : null}
          <StandingRules rules={standing} fired={fired} manager={viewer.scope.all} csrf={viewer.csrf} />
          <LearnedRules rules={learned} csrf={viewer.csrf} />
        </>
      ),
    };
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
      <h2>Learned rules</h2>
      <p>Approving a decision with "remember" lets that agent run that capability without asking again. Revoke a rule to be asked again.</p>
      {rules.length ? (
        <table class="stack">
          <ColumnHeads names={['Agent', 'Capability', 'Arguments', 'Until', 'Learned']} action="Action" />
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
