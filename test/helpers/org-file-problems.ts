import { OrgFileError, parseOrgFile } from '../../src/org/org-file/schema.js';

/** The problems `parseOrgFile` reports for `text`; fails the test when it accepts the file. */
export function problemsOf(text: string): string[] {
  try {
    parseOrgFile(text, 'org.yaml');
  } catch (error) {
    if (error instanceof OrgFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the file to be refused');
}
