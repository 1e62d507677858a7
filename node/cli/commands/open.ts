// `heaplens open <paths…> [--port N] [--no-browser]`: the app's page served with the Node engine on one loopback
// port (node/engine/server.ts), as `go tool pprof -http` does. The job is read here by the CLI's own readers; the
// first line printed is the URL; the default browser opens it unless --no-browser; Ctrl-C (or SIGTERM) stops.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NodeEngine, reportAppFrom } from '../../engine/engine.js';
import { serveEngine } from '../../engine/server.js';
import { flag, has, UsageError, type ParsedArgs } from '../args.js';
import type { Output } from '../common.js';
import { symbolOptionsOf } from '../symbols.js';
import { REPORT_APP_DIRS } from './report.js';

/** The built page (dist/renderer), from the built CLI (dist/node/cli/commands, its bundle) or the sources (tsx). */
export function findPage(): string | null {
  for (const rel of ['../../../renderer/', '../../../dist/renderer/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return null;
}

export async function openCommand(args: ParsedArgs, io: Output, stop?: Promise<void>): Promise<number> {
  if (args.positional.length === 0) throw new UsageError('"open" needs at least one file or folder');
  const page = findPage();
  if (!page) {
    io.err(
      'heaplens: the app is not built (dist/renderer/index.html): run `npx vite build` (or `npm run build:renderer`)',
    );
    return 1;
  }
  const engine = new NodeEngine({
    paths: args.positional,
    allowPaths: false,
    symbols: symbolOptionsOf(args),
    info: { kind: 'node', label: 'heaplens open (Node)' },
    reportApp: reportAppFrom(REPORT_APP_DIRS),
  });
  let served;
  try {
    served = await serveEngine({ engine, pageDir: page, port: Number(flag(args, 'port') ?? '0') });
  } catch (e) {
    engine.close();
    io.err(`heaplens: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  // the URL first: a script or a terminal's link opens it
  io.out(served.url);
  io.err('heaplens: serving this job on the loopback only; Ctrl-C stops');
  if (!has(args, 'no-browser')) {
    const { default: open } = await import('open');
    open(served.url).catch((e: unknown) =>
      io.err(`heaplens: could not open a browser (${e instanceof Error ? e.message : String(e)}): open the URL above`),
    );
  }
  engine.servedJob()?.then(
    (s) => io.err(`heaplens: job read: ${s.processes.length} process${s.processes.length === 1 ? '' : 'es'}`),
    (e: unknown) => io.err(`heaplens: ${e instanceof Error ? e.message : String(e)}`),
  );
  await (stop ??
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }));
  await served.close();
  engine.close();
  return 0;
}
