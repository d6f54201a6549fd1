/**
 * What the emails say (README "Email"): a decision waiting for the person, its half-way reminder, the escalation to
 * the owners and admins, and a task question. Each is one message, written once and sent as plain text and as HTML
 * rendered with preact, which escapes everything an agent or a person wrote (arguments, reasons, questions).
 */
import { render } from 'preact-render-to-string';
import type { DecisionRecord } from '../decisions/records.js';
import { formatTime } from '../../platform/time.js';
import { decisionPageUrl } from '../decisions/page-url.js';

/** The most of the arguments an email shows; the decision page shows them whole. */
const SHOWN_ARGUMENT_CHARS = 2048;
/** The most of a question an email quotes. */
const SHOWN_QUESTION_CHARS = 2048;

interface Fact {
  label: string;
  value: string | string[];
  /** Shown as it is, in a fixed-width block (JSON). */
  preformatted?: boolean;
}

/** A message before it is written out as text and as HTML. */
interface Message {
  subject: string;
  paragraphs: string[];
  facts: Fact[];
  links: Array<{ label: string; url: string }>;
}

export interface WrittenEmail {
  subject: string;
  text: string;
  html: string;
}

export type DecisionReason = 'decision' | 'reminder' | 'escalation';

/**
 * A decision waiting: the capability, agent, risk, the gate's reasons, the arguments and the expiry, with a link to
 * the decision page. `asked` names the people asked to decide, for the escalation.
 */
export function decisionEmail(reason: DecisionReason, decision: DecisionRecord, origin: string, asked: readonly string[] = []): WrittenEmail {
  const action = `${decision.agent.name} asks to run ${decision.action.capability_name}`;
  const expires = formatTime(decision.expires_at);
  const opening: Record<DecisionReason, { subject: string; paragraphs: string[] }> = {
    decision: {
      subject: `Decision needed: ${decision.agent.name} asks to run ${decision.action.capability_name} (${decision.risk} risk)`,
      paragraphs: [`${action} and waits for your decision. Until someone approves it, nothing is done.`],
    },
    reminder: {
      subject: `Reminder: ${decision.agent.name} still waits for your decision on ${decision.action.capability_name}`,
      paragraphs: [`${action} and has waited half its time for your decision. It expires at ${expires}; the action then fails.`],
    },
    escalation: {
      subject: `Undecided for half its time: ${decision.agent.name} asks to run ${decision.action.capability_name} (expires ${expires})`,
      paragraphs: [
        `${action}. It has waited half its time and nobody has decided: ${asked.length ? `${asked.join(', ')} ${asked.length === 1 ? 'was' : 'were'} asked` : 'nobody else can decide it'}. It expires at ${expires}; the action then fails.`,
        'You are told as an owner or admin of the organization: you may decide it too.',
      ],
    },
  };
  const args = JSON.stringify(decision.action.input, null, 2) ?? 'null';
  return writeOut({
    ...opening[reason],
    facts: [
      { label: 'Capability', value: `${decision.action.capability_name} (${decision.action.capability_key})` },
      { label: 'Agent', value: decision.agent.name },
      { label: 'Risk', value: decision.risk },
      { label: 'Why it paused', value: decision.reasons.length ? decision.reasons : ['the gate asked for approval'] },
      {
        label: 'Arguments',
        value: args.length > SHOWN_ARGUMENT_CHARS ? `${args.slice(0, SHOWN_ARGUMENT_CHARS)}\n… (${args.length} characters in all: the decision page shows them whole)` : args,
        preformatted: true,
      },
      { label: 'Expires', value: expires },
    ],
    links: [{ label: 'Approve or deny', url: decisionPageUrl(origin, decision.id) }],
  }, origin);
}

/** What a task question email needs to say. */
export interface QuestionFacts {
  taskId: string;
  taskTitle: string;
  spaceName: string;
  agentName: string | null;
  question: string;
}

/** A question an agent asked on a task of the person's space, with links to answer it and to the task. */
export function questionEmail(facts: QuestionFacts, origin: string): WrittenEmail {
  const asker = facts.agentName ?? 'An agent';
  const question = facts.question.length > SHOWN_QUESTION_CHARS ? `${facts.question.slice(0, SHOWN_QUESTION_CHARS)}…` : facts.question;
  return writeOut({
    subject: `Question on “${facts.taskTitle}” from ${asker}`,
    paragraphs: [`${asker} asks a question on the task “${facts.taskTitle}” in ${facts.spaceName} and waits for an answer.`],
    facts: [
      { label: 'Task', value: facts.taskTitle },
      { label: 'Question', value: question, preformatted: true },
    ],
    links: [
      { label: 'Answer it in your inbox', url: `${origin}/inbox` },
      { label: 'The task', url: `${origin}/tasks/${encodeURIComponent(facts.taskId)}` },
    ],
  }, origin);
}

/** What an invitation email needs to say. */
export interface InvitationFacts {
  name: string;
  role: string;
  organization: string;
  inviter: string | null;
  expiresAt: string;
}

/** An invitation: who asks the person to join, as what, and the one-time link to set their password. */
export function invitationEmail(facts: InvitationFacts, link: string, origin: string): WrittenEmail {
  const by = facts.inviter ? `${facts.inviter} invites you` : 'You are invited';
  return writeOut(
    {
      subject: `${by} to ${facts.organization} on Atrium`,
      paragraphs: [
        `Hello ${facts.name}, ${by.charAt(0).toLowerCase()}${by.slice(1)} to join ${facts.organization} as ${facts.role}.`,
        `Open the link to choose your password; it works once and expires at ${formatTime(facts.expiresAt)}.`,
      ],
      facts: [],
      links: [{ label: 'Join and choose your password', url: link }],
    },
    origin,
    'You get this email because someone of this organization invited this address. If you did not expect it, ignore it: nothing happens until the link is opened.',
  );
}

function writeOut(
  message: Message,
  origin: string,
  footer = `You get these emails because you are a person of this organization. Turn them off on your account page: ${origin}/account`,
): WrittenEmail {
  const text = [
    ...message.paragraphs,
    message.facts.map(factText).join('\n'),
    message.links.map((link) => `${link.label}: ${link.url}`).join('\n'),
    `--\n${footer}`,
  ].join('\n\n');
  return { subject: message.subject, text: `${text}\n`, html: `<!doctype html>\n${render(<HtmlEmail message={message} footer={footer} />)}` };
}

function factText(fact: Fact): string {
  if (Array.isArray(fact.value)) return `${fact.label}:\n${fact.value.map((item) => `  - ${item}`).join('\n')}`;
  if (fact.preformatted) return `${fact.label}:\n${fact.value.replace(/^/gm, '  ')}`;
  return `${fact.label}: ${fact.value}`;
}

function HtmlEmail({ message, footer }: { message: Message; footer: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width" />
        <title>{message.subject}</title>
      </head>
      <body style="font-family: system-ui, sans-serif; line-height: 1.5; max-width: 40em">
        {message.paragraphs.map((paragraph, index) => (
          <p key={index}>{paragraph}</p>
        ))}
        <dl>
          {message.facts.map((fact) => (
            <>
              <dt style="font-weight: bold">{fact.label}</dt>
              <dd style="margin: 0 0 0.75em 0">
                {Array.isArray(fact.value) ? (
                  <ul>
                    {fact.value.map((item, index) => (
                      <li key={index}>{item}</li>
                    ))}
                  </ul>
                ) : fact.preformatted ? (
                  <pre style="white-space: pre-wrap; overflow-wrap: anywhere">{fact.value}</pre>
                ) : (
                  fact.value
                )}
              </dd>
            </>
          ))}
        </dl>
        {message.links.map((link) => (
          <p key={link.url}>
            <a href={link.url}>{link.label}</a>
          </p>
        ))}
        <p style="color: #555; font-size: 0.9em">{footer}</p>
      </body>
    </html>
  );
}
