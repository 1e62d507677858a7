#!/usr/bin/env node
// Built CLI entry (run `npm run build` first when working from a checkout): the bundle of tools/bundle-cli.mjs, run
// through V8's code cache (node/cli/code-cache.ts).
import { fileURLToPath } from 'node:url';
import { runCli } from '../dist/node/cli/code-cache.js';

runCli(fileURLToPath(new URL('../dist/node/cli/bundle/heaplens.cjs', import.meta.url)));
