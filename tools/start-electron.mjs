#!/usr/bin/env node
// `npm start`: runs the desktop app with Electron, or says plainly why it cannot and what works instead.
// Electron's own launcher downloads its binary on first use and, offline, dies with a raw "fetch failed"
// stack; Electron 45 also needs Node ≥ 22.12. The web app (`npm run web`) and the CLI need neither.
// `--preflight` (run by `npm start` before it builds) checks Node and the binary (downloading it once) and exits, so a
// machine that cannot run the app learns it in one line before a 10-second build, not after it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Electron 45's own engines field. */
export const ELECTRON_NODE = [22, 12];
const FALLBACK = 'npm run web      the same app in your browser (works on Node 20.19+, no Electron needed)';

/** Why the desktop app cannot start on this Node, or null. */
export function nodeProblem(version) {
  const [maj, min] = version.replace(/^v/, '').split('.').map(Number);
  if (maj > ELECTRON_NODE[0] || (maj === ELECTRON_NODE[0] && min >= ELECTRON_NODE[1])) return null;
  return `the desktop app (Electron 45) needs Node ≥ ${ELECTRON_NODE.join('.')}; this is Node ${version.replace(/^v/, '')}`;
}

/** The first line of a failed download's output that says what went wrong (not a stack frame). */
export function downloadCause(output) {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at ') && !/^\^+$/.test(l) && !l.startsWith('Node.js v'));
  const cause =
    lines.find((l) =>
      /ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET|certificate|fetch failed|HTTPError|404|403|checksum/i.test(
        l,
      ),
    ) ??
    lines.find((l) => /error/i.test(l)) ??
    lines[0];
  return cause ?? 'the download failed without a message';
}

function say(lines) {
  process.stderr.write(lines.map((l) => `heaplens: ${l}`).join('\n') + '\n');
}

function main() {
  const version = process.env.HEAPLENS_NODE_VERSION_FOR_TEST ?? process.version;
  const require = createRequire(import.meta.url);
  const pkgDir = process.env.HEAPLENS_ELECTRON_DIR ?? dirname(require.resolve('electron/package.json'));
  const pathFile = join(pkgDir, 'path.txt');
  const binary = () => (existsSync(pathFile) ? join(pkgDir, 'dist', readFileSync(pathFile, 'utf8').trim()) : null);
  let exe = binary();
  if (!exe || !existsSync(exe)) {
    // the binary, once there, runs from any Node; getting it (electron's install.js) needs 22.12
    const tooOld = nodeProblem(version);
    if (tooOld) {
      say([
        `cannot start the desktop app: ${tooOld}, and the Electron binary is not downloaded yet.`,
        `instead: ${FALLBACK}`,
        '  or install Node 22.12 or later, then npm start',
      ]);
      return 1;
    }
    process.stderr.write('heaplens: the Electron binary is not installed yet; downloading it (once)…\n');
    const r = spawnSync(process.execPath, [join(pkgDir, 'install.js')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exe = binary();
    if (r.status !== 0 || !exe || !existsSync(exe)) {
      say([
        `cannot start the desktop app: could not download Electron: ${downloadCause(`${r.stderr ?? ''}\n${r.stdout ?? ''}`)}`,
        `instead: ${FALLBACK}`,
        '  or, with a mirror or a local copy: ELECTRON_MIRROR=<url> npm start (or put electron-v45…-linux-x64.zip in',
        '  the folder named by electron_config_cache), then npm start',
      ]);
      return 1;
    }
  }
  if (process.argv.includes('--preflight')) return 0;
  const child = spawn(exe, ['.', ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  return null;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = main();
  if (code !== null) process.exitCode = code;
}
