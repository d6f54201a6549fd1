#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader, so there is no build step to forget. The loader
// reads this package's tsconfig.json (its JSX settings: preact) wherever `atrium` is started from; by default
// tsx reads the one in the working directory, and the pages then compile for React.
import { register } from 'tsx/esm/api';

register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
await import('../src/cli.ts');
