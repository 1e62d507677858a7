#!/usr/bin/env node
// Built CLI entry (run `npm run build` first when working from a checkout).
import '../dist/node/cli/heaplens.js';
