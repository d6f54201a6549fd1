/**
 * GET and POST /settings (issue 21 items 4 and 5): the organization settings owners and admins change from the
 * console — which risk tiers a person must decide in their own browser (resolve_decision over MCP hands those to
 * the decision page) and whether MCP Apps may resolve decisions inside the AI client. Anyone else is answered 403.
 * The organization file sets the same two (`organization.decide_in_browser`, `organization.in_app_decisions`)
 * when it names them, so the page says so; a file that leaves them out keeps what is chosen here.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { RISKS } from '../gate/types.js';
import { assertManager } from '../people/manage.js';
import { changeDecisionSettings, decisionSettings, readDecisionSettings, type DecisionSettings } from '../settings/decision-settings.js';
import { consolePage } from './console.js';
import { orgFileName } from './manage.js';
import { managementPost } from './manage-form.js';
import { optionalField } from './parts.js';
import { formField, formFields, type WebContext } from './respond.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';

const settingsQuery = z.object({ saved: optionalField(z.literal('1')) });

const TIER_MEANINGS: Record<(typeof RISKS)[number], string> = {
  low: 'Low-risk actions',
  medium: 'Medium-risk actions',
  high: 'High-risk actions',
  critical: 'Critical actions',
};

export function registerSettingsPage(app: FastifyInstance, web: WebContext): void {
  const file = orgFileName(web.ctx.config);

  consolePage(app, web, '/settings', settingsQuery, async (viewer, { query }) => {
    assertManager(viewer.person, 'the organization settings');
    const settings = await readDecisionSettings(web.ctx.db);
    return {
      title: 'Organization settings',
      body: <SettingsForm settings={settings} csrf={viewer.csrf} saved={query.saved === '1'} file={file} />,
    };
  });

  managementPost(app, web, '/settings', {
    back: '/settings',
    input: decisionSettings,
    // Unticked checkboxes send nothing: their absence is the choice "off".
    read: (body) => ({ decide_in_browser: formFields(body, 'decide_in_browser'), in_app_decisions: formField(body, 'in_app_decisions') === '1' }),
    run: async (person, settings) => (await writeOrg(web.ctx, [ORG_DIRECTORY], (tx) => changeDecisionSettings(tx, person, settings)), '/settings?saved=1'),
  });
}

function SettingsForm({ settings, csrf, saved, file }: { settings: DecisionSettings; csrf: string; saved: boolean; file: string }) {
  return (
    <>
      <h1>Organization settings</h1>
      {saved ? <p role="status">Saved. The activity log records the change.</p> : null}
      <form method="post" action="/settings" class="narrow">
        <input type="hidden" name="csrf" value={csrf} />
        <fieldset aria-describedby="browser-help">
          <legend>Decided in the person's browser</legend>
          <p id="browser-help" class="muted">
            An AI client cannot approve or deny these, whatever scopes it was granted: resolve_decision sends it the decision's page
            instead, and the decision waits until a person decides there, signed in.
          </p>
          {RISKS.map((tier) => (
            <p class="check" key={tier}>
              <input type="checkbox" id={`browser-${tier}`} name="decide_in_browser" value={tier} checked={settings.decide_in_browser.includes(tier)} />{' '}
              <label class="inline" for={`browser-${tier}`}>
                {TIER_MEANINGS[tier]}
              </label>
            </p>
          ))}
        </fieldset>
        <fieldset aria-describedby="in-app-help">
          <legend>Decisions in MCP Apps</legend>
          <p class="check">
            <input type="checkbox" id="in_app_decisions" name="in_app_decisions" value="1" checked={settings.in_app_decisions} />{' '}
            <label class="inline" for="in_app_decisions">
              Let an approval card inside an AI client approve or deny
            </label>
          </p>
          <p id="in-app-help" class="muted">
            Otherwise the card opens the decision's page. Tiers decided in the browser stay there either way.
          </p>
        </fieldset>
        <p class="muted">
          {file} sets these too when it names them (organization.decide_in_browser, organization.in_app_decisions): applying it
          then brings them back to the file's values.
        </p>
        <button type="submit">Save settings</button>
      </form>
    </>
  );
}
