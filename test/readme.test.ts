/**
 * Every shell example of README.md runs, in order, against a fresh `npm start` (scripts/readme-examples.ts),
 * so an example cannot rot unnoticed. Among them the agent walkthrough (issue 18 item 2): the example agent
 * serves the org.yaml's `helper` and `notify_team`, Ada connects a client through OAuth in a real browser, and
 * `walkthrough.mts` gets a message answered, a task's question answered on the inbox, and a high-risk capability
 * approved on the inbox and run; it exits non-zero when any of them ends otherwise.
 */
import { describe, expect, it } from 'vitest';
import { runReadmeExamples } from '../scripts/readme-examples.js';
import { PERSON_ANSWER } from '../scripts/lib/readme-person.js';

describe('README examples', () => {
  it('run as pasted, in order, on a fresh start, the person doing in a browser what they ask', async () => {
    const ran: string[] = [];
    // Free ports, not the README's 8080 and 8081: other test files and other runs may hold those.
    await runReadmeExamples((line) => ran.push(line), { ports: 'free' });
    expect(ran.filter((line) => line.endsWith('lines)')).length).toBeGreaterThanOrEqual(5);
    expect(ran.find((line) => line.endsWith('started in the background'))).toBeDefined();
    expect(ran.filter((line) => line.startsWith('  person: '))).toEqual([
      '  person: signed in as ada@example.com, ticked integrations:act, clicked Allow',
      '  person: ticked integrations:act, clicked Allow',
      '  person: answered "Question on Write the release notes" on /inbox',
      '  person: approved "Decision Tell the team" on /inbox',
    ]);
    // What walkthrough.mts printed: the message answered, the task done with the answer, the approved result.
    const printed = (prefix: string) => {
      const line = ran.find((logged) => logged.startsWith(`  > ${prefix} `));
      expect(line, `walkthrough.mts printed no "${prefix}" line`).toBeDefined();
      return JSON.parse(line!.slice(`  > ${prefix} `.length));
    };
    expect(printed('helper answered:')).toEqual({ reply: 'You said: Hello, helper' });
    expect(printed('task done:')).toEqual({ done: true, told: PERSON_ANSWER });
    expect(printed('notify_team approved by Ada (inbox):')).toEqual({
      status: 200,
      body: { sent: true, capability: 'notify_team', text: 'The release notes are out' },
    });
  }, 300_000);
});
