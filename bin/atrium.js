#!/usr/bin/env -S node --max-semi-space-size=2
// --max-semi-space-size=2 (MB; `npm start` passes it too): V8's young generation grows to 16 MB per semi-space by
// default and keeps those pages; an idle server then holds some 50 MB more (`npm run measure:memory`, issue 22).
// Runs the TypeScript sources directly through tsx's loader, so there is no build step to forget. The loader
// reads this package's tsconfig.json (its JSX settings: preact) wherever `atrium` is started from; by default
// tsx reads the one in the working directory, and the pages then compile for React.
import { register } from 'tsx/esm/api';

register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
await import('../src/cli.ts');
