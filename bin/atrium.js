#!/usr/bin/env -S node --max-semi-space-size=4 --v8-pool-size=1
// The flags (`npm start` passes the same ones; bench/lib/child.ts's SERVING_NODE_FLAGS too), measured with
// `npm run measure:memory` (issue 22): --max-semi-space-size=4 (MB): V8's young generation grows to 16 MB per
// semi-space by default and keeps those pages, some 50 MB more when idle; 4 MB costs 2-4 MB idle over 2 MB and
// spends a sixth less CPU per cached public read (fewer scavenges); --v8-pool-size=1: V8's background
// threads (four by default: concurrent marking, compilation) each leave memory in a malloc arena of their own,
// some 30 MB more when idle with four. The benchmarks run their servers with the same flags.
// Runs dist/ when it was compiled from src/ as it is now (bin/compiled.js; `npm start` compiles first), and the
// TypeScript sources through tsx's loader otherwise, so there is no build step to forget. The loader reads this
// package's tsconfig.json (its JSX settings: preact) wherever `atrium` is started from; by default tsx reads the
// one in the working directory, and the pages then compile for React.
import { compiledEntry } from './compiled.js';

const entry = compiledEntry();
if (entry) {
  await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
  await import('../src/cli.ts');
}
