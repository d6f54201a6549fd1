// Types of bin/compiled.js (plain JavaScript: it runs before any TypeScript loader).
export function sourcesFingerprint(dir?: string): string;
export function compiledEntry(): string | undefined;
export function compile(): Promise<boolean>;
