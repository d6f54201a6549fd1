/**
 * Every shell example of README.md runs, in order, against a fresh `npm start` (scripts/readme-examples.ts),
 * so an example cannot rot unnoticed.
 */
import { describe, expect, it } from 'vitest';
import { runReadmeExamples } from '../scripts/readme-examples.js';

describe('README examples', () => {
  it('run as pasted, in order, on a fresh start', async () => {
    const ran: string[] = [];
    await runReadmeExamples((line) => ran.push(line));
    expect(ran.filter((line) => line.endsWith('lines)')).length).toBeGreaterThanOrEqual(5);
  }, 300_000);
});
