#!/usr/bin/env node
// Built CLI entry (run `npm run build` first when working from a checkout): the bundle of tools/bundle-cli.mjs.
import '../dist/node/cli/bundle/heaplens.js';
