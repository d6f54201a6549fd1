/**
 * GET /capabilities and /capabilities/:id (DESIGN 4.4, 4.6): what the organization can do in the world — risk,
 * cost, the connector's kind and host (never a URL's path or a secret) — and for one capability the rules that
 * can decide it, how often each shadow rule would have fired in the last 30 days, and its recent verdicts, within
 * the reader's scope.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { findCapabilityOverview, listCapabilityOverviews, type CapabilityOverview } from '../capabilities/overview.js';
import { recentVerdicts, shadowFirings } from '../capabilities/verdicts.js';
import { rulesConcerning } from '../rules/records.js';
import { Badge, describeConditions, OlderLink, Time, notFound, optionalField, pageHref } from './parts.js';
import { consolePage } from './console.js';
import { isManager } from '../people/records.js';
import { FromFile, StatusToggle, orgFileName } from './manage.js';
import { noQuery } from './operations.js';
import type { WebContext } from './respond.js';

const PAGE_SIZE = 50;
const RECENT_VERDICTS = 20;
const SHADOW_DAYS = 30;
const RULE_SOURCES = { file: 'from org.yaml', console: 'made on the console', learned: 'learned' } as const;

const listQuery = z.object({ after: optionalField(z.string().min(1).max(200)) });

export function registerCapabilityPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  const file = orgFileName(web.ctx.config);

  consolePage(app, web, '/capabilities', listQuery, async ({ person }, { query }) => {
    const page = await listCapabilityOverviews(db, { limit: PAGE_SIZE, after: query.after });
    return {
      title: 'Capabilities',
      body: (
        <>
          <h1>Capabilities</h1>
          {isManager(person) ? (
            <p>
              <a href="/capabilities/new" role="button">
                New capability
              </a>
            </p>
          ) : null}
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Capability</th>
                <th scope="col">Risk</th>
                <th scope="col">Cost</th>
                <th scope="col">Connector</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {page.rows.map((capability) => (
                <tr key={capability.id}>
                  <th scope="row" data-label="Capability">
                    <a href={`/capabilities/${capability.id}`}>{capability.key}</a> <small>{capability.name}</small>
                    <FromFile managedBy={capability.managedBy} file={file} />
                  </th>
                  <td data-label="Risk">
                    <Badge value={capability.risk} />
                  </td>
                  <td data-label="Cost">{capability.cost}</td>
                  <td data-label="Connector">
                    <Connector capability={capability} />
                  </td>
                  <td data-label="Status">{capability.enabled ? 'enabled' : <Badge value="disabled" />}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <OlderLink next={page.next ? pageHref('/capabilities', { after: page.next }) : null} label="More" />
        </>
      ),
    };
  });

  consolePage<typeof noQuery, { id: string }>(app, web, '/capabilities/:id', noQuery, async ({ scope, person, csrf }, { params, reply }) => {
    const capability = await findCapabilityOverview(db, params.id);
    if (!capability) return notFound(reply, 'capability', { href: '/capabilities', name: 'capabilities' });
    const [rules, fired, verdicts] = await Promise.all([
      rulesConcerning(db, scope, capability),
      shadowFirings(db, scope, capability.id, SHADOW_DAYS),
      recentVerdicts(db, scope, capability.id, RECENT_VERDICTS),
    ]);
    return {
      title: capability.key,
      body: (
        <>
          <p>
            <a href="/capabilities">Capabilities</a>
          </p>
          <h1>
            {capability.key} <Badge value={capability.risk} />
            <FromFile managedBy={capability.managedBy} file={file} />
          </h1>
          {isManager(person) ? <ManageCapability capability={capability} csrf={csrf} file={file} /> : null}
          <p>{capability.name}</p>
          {capability.description ? <p>{capability.description}</p> : null}
          <dl class="facts">
            <dt>Risk</dt>
            <dd>{capability.risk}</dd>
            <dt>Cost</dt>
            <dd>
              {capability.cost} {capability.cost === 1 ? 'unit' : 'units'}
            </dd>
            <dt>Connector</dt>
            <dd>
              <Connector capability={capability} />
            </dd>
            <dt>Status</dt>
            <dd>{capability.enabled ? 'enabled' : 'disabled'}</dd>
          </dl>

          <h2>Rules that apply</h2>
          {rules.length === 0 ? (
            <p>No standing or learned rule concerns it: the agent's autonomy against its risk decides.</p>
          ) : (
            <table class="stack">
              <caption class="visually-hidden">Rules that apply</caption>
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col">Says</th>
                  <th scope="col">Mode</th>
                  <th scope="col">When also</th>
                  <th scope="col">Would have fired ({SHADOW_DAYS} days)</th>
                </tr>
              </thead>
              <tbody>
                {rules.map((rule) => (
                  <tr key={rule.id}>
                    <th scope="row" data-label="Rule">
                      {rule.name} <small>{RULE_SOURCES[rule.source]}</small>
                    </th>
                    <td data-label="Says">
                      <Badge value={rule.then} />
                    </td>
                    <td data-label="Mode">{rule.mode === 'shadow' ? 'shadow (never enforced)' : 'enforced'}</td>
                    <td data-label="When also">
                      {describeConditions(rule.when)}
                      {rule.until ? (
                        <>
                          {' '}
                          until <Time value={rule.until} />
                        </>
                      ) : null}
                    </td>
                    <td data-label={`Would have fired (${SHADOW_DAYS} days)`}>
                      {rule.mode === 'shadow' ? times(fired.get(rule.id) ?? 0) : '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Recent verdicts</h2>
          {verdicts.length === 0 ? (
            <p>No verdicts you can see.</p>
          ) : (
            <table class="stack">
              <caption class="visually-hidden">Recent verdicts</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Verdict</th>
                  <th scope="col">Reasons</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Space</th>
                  <th scope="col">Operation</th>
                </tr>
              </thead>
              <tbody>
                {verdicts.map((verdict) => (
                  <tr key={verdict.id}>
                    <td data-label="When">
                      <Time value={verdict.createdAt} />
                    </td>
                    <td data-label="Verdict">
                      <Badge value={verdict.verdict} />
                    </td>
                    <td data-label="Reasons">
                      {verdict.reasons.join('; ') || '—'}
                      {verdict.shadow.length ? <small> · shadow: {verdict.shadow.map((entry) => `${entry.name} would ${entry.would.replace(/_/g, ' ')}`).join('; ')}</small> : null}
                    </td>
                    <td data-label="Agent">{verdict.agent.name ? <a href={`/agents/${verdict.agent.id}`}>{verdict.agent.name}</a> : '—'}</td>
                    <td data-label="Space">{verdict.space?.name ?? '—'}</td>
                    <td data-label="Operation">
                      {verdict.operationId ? (
                        <a href={`/operations/${verdict.operationId}`}>
                          <code>{verdict.operationId}</code>
                        </a>
                      ) : (
                        <small>a dry run or a description</small>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p>
            <a href={pageHref('/activity', { capability: capability.id })}>Everything done with {capability.name}, in the activity log</a>
          </p>
        </>
      ),
    };
  });
}

/** Edit and enable/disable for one the console made; one the file declares is changed in the file. */
function ManageCapability({ capability, csrf, file }: { capability: CapabilityOverview; csrf: string; file: string }): VNode {
  if (capability.managedBy === 'file') return <p class="muted">Declared in {file}: change it there and apply the file.</p>;
  const next = capability.enabled ? 'disabled' : 'enabled';
  return (
    <div class="manage">
      <a href={`/capabilities/${capability.id}/edit`} role="button">
        Edit
      </a>
      <StatusToggle action={`/capabilities/${capability.id}/status`} csrf={csrf} status={next} enable={next === 'enabled'} />
    </div>
  );
}

function times(count: number): string {
  return `${count} ${count === 1 ? 'time' : 'times'}`;
}

function Connector({ capability }: { capability: CapabilityOverview }): VNode {
  const connector = capability.connector;
  if (connector.kind === 'content') return <span>content service ({connector.action})</span>;
  return <span>webhook to {connector.host ?? 'an invalid URL'}</span>;
}
