// node --import ./app/test-support/electron-hook.mjs dist/app/main.js: `electron` resolves to fake-electron.mjs.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(
      `export async function resolve(spec, ctx, next) { if (spec === 'electron') return { url: ${JSON.stringify(
        new URL('./fake-electron.mjs', import.meta.url).href,
      )}, shortCircuit: true }; return next(spec, ctx); }`,
    ),
);
