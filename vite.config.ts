// Vite config for the renderer (Svelte 5 + d3). The renderer lives in renderer/ and builds to dist/renderer
// with relative asset URLs, so the same build works from the Electron app:// scheme and from any local web server.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The "try it" sample: fixtures/oom-job, a real data-loading job the kernel's OOM killer stopped (made by its
 * make-oom-job.sh under jemalloc and the capture library): every process's dumps with their Python frames, the
 * kernel's log, the trainer's log and the cgroup's files. Its first screen names the leak by its Python line and the
 * process that was killed, as a user's own job would. Emitted as sample/<path> plus sample/index.json at build time
 * and served from the same paths in dev.
 */
function sampleSeries(): Plugin {
  const jobDir = path.join(here, 'fixtures', 'oom-job');
  const folders = ['dumps', 'logs/cgroup'];
  // the kernel's log once (dmesg-T.txt holds the same lines), the trainer's log
  const loose = ['logs/dmesg.txt', 'logs/job.log'];
  const pick = (): { name: string; size: number; mtimeMs: number; file: string }[] => {
    if (!existsSync(jobDir)) return [];
    const rels = folders
      .flatMap((d) => readdirSync(path.join(jobDir, d)).map((n) => `${d}/${n}`))
      .concat(loose)
      .filter((r) => existsSync(path.join(jobDir, r)))
      .sort();
    return rels.map((name) => {
      const file = path.join(jobDir, name);
      const st = statSync(file);
      return { name, size: st.size, mtimeMs: Math.round(st.mtimeMs), file };
    });
  };
  // Served under another name: a static server answers `x.gz` with Content-Encoding: gzip (vite preview's sirv
  // does), and the browser would hand the page the inflated text under the compressed file's size and name.
  const served = (name: string): string => (name.endsWith('.gz') ? `${name}.bin` : name);
  const index = (files: { name: string; size: number; mtimeMs: number }[]): string =>
    JSON.stringify({
      source: 'fixtures/oom-job',
      files: files.map((f) => ({ path: f.name, url: served(f.name), size: f.size, mtimeMs: f.mtimeMs })),
    });
  return {
    name: 'heaplens-sample-series',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const m = /\/sample\/([^?]*)/.exec(req.url ?? '');
        if (!m) return next();
        const files = pick();
        if (m[1] === 'index.json') {
          res.setHeader('Content-Type', 'application/json');
          res.end(index(files));
          return;
        }
        const f = files.find((x) => served(x.name) === decodeURIComponent(m[1]));
        if (!f) return next();
        res.setHeader('Content-Type', 'application/octet-stream');
        res.end(readFileSync(f.file));
      });
    },
    generateBundle() {
      const files = pick();
      for (const f of files)
        this.emitFile({ type: 'asset', fileName: `sample/${served(f.name)}`, source: readFileSync(f.file) });
      this.emitFile({ type: 'asset', fileName: 'sample/index.json', source: index(files) });
    },
  };
}

/**
 * The symbolizer's WebAssembly (native-tools/addr2line/heaplens_addr2line.wasm, committed) as an asset URL for
 * the worker: `import url from 'virtual:heaplens/addr2line-wasm-url'`. A virtual module keeps renderer/ from
 * importing native-tools/ directly (tools/check-imports.mjs).
 */
function addr2lineWasm(): Plugin {
  const id = 'virtual:heaplens/addr2line-wasm-url';
  const file = path.join(here, 'native-tools', 'addr2line', 'heaplens_addr2line.wasm');
  return {
    name: 'heaplens-addr2line-wasm',
    resolveId(source) {
      return source === id ? '\0' + id : null;
    },
    load(resolved) {
      return resolved === '\0' + id ? `export { default } from ${JSON.stringify(file + '?url')};` : null;
    },
  };
}

/**
 * The single-file report's page (the renderer's report build, vite.report.config.ts → dist/report-app/), as text
 * for the worker that builds reports: `import app from 'virtual:heaplens/report-app'` → `{ js, css }`. Built once
 * per Vite process (a nested build), so `vite build` and the dev server never inline a stale page.
 */
function reportApp(): Plugin {
  const id = 'virtual:heaplens/report-app';
  const out = path.join(here, 'dist', 'report-app');
  let built: Promise<void> | null = null;
  return {
    name: 'heaplens-report-app',
    resolveId(source) {
      return source === id ? '\0' + id : null;
    },
    async load(resolved) {
      if (resolved !== '\0' + id) return null;
      built ??= import('vite').then(async ({ build }) => {
        await build({ configFile: path.join(here, 'vite.report.config.ts'), logLevel: 'warn' });
      });
      await built;
      const js = path.join(out, 'report.js');
      const css = path.join(out, 'report.css');
      this.addWatchFile(js);
      this.addWatchFile(css);
      return `export default ${JSON.stringify({ js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') })};`;
    },
  };
}

/** The page's CSP: the dev server's HMR websocket is allowed only when serving. */
function csp(): Plugin {
  let serve = false;
  return {
    name: 'heaplens-csp',
    configResolved(c) {
      serve = c.command === 'serve';
    },
    transformIndexHtml(html) {
      return html.replace('__DEV_CONNECT__', serve ? 'ws://127.0.0.1:5173' : '').replace(' ; ', '; ');
    },
  };
}

export default defineConfig({
  root: path.join(here, 'renderer'),
  base: './',
  publicDir: path.join(here, 'renderer', 'public'),
  plugins: [svelte({ configFile: path.join(here, 'svelte.config.js') }), sampleSeries(), csp(), addr2lineWasm()],
  worker: { format: 'es', plugins: () => [addr2lineWasm(), reportApp()] },
  build: {
    outDir: path.join(here, 'dist', 'renderer'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    sourcemap: true,
    chunkSizeWarningLimit: 1000,
  },
  server: { host: '127.0.0.1', port: 5173, strictPort: true, fs: { allow: [here] } },
  // `npm run web`: 4173, or the next free port when another server has it (Vite prints the URL it chose); the e2e
  // suite passes --port and --strictPort of its own.
  preview: { host: '127.0.0.1', port: 4173, strictPort: false },
});
