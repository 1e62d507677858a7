// Vite config for the single-file report: the renderer itself (renderer/src/report-main.ts: App.svelte over
// the embedded job, the analysis in-page) as one self-contained IIFE script plus one stylesheet, no imports, no
// assets, no worker file, that core/report/html.ts inlines into every report. Output: dist/report-app/report.js and
// report.css (the CLI reads them; the app's worker gets them through vite.config.ts's plugin).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

const here = path.dirname(fileURLToPath(import.meta.url));

/** In a report nothing is symbolized and no report is built: those virtual modules are empty here. */
function stubs(): Plugin {
  const ids: Record<string, string> = {
    'virtual:heaplens/addr2line-wasm-url': "export default '';",
    'virtual:heaplens/report-app': "export default { js: '', css: '' };",
  };
  return {
    name: 'heaplens-report-stubs',
    resolveId: (source) => (source in ids ? '\0' + source : null),
    load: (id) => (id.startsWith('\0') && id.slice(1) in ids ? ids[id.slice(1)] : null),
  };
}

export default defineConfig({
  root: path.join(here, 'renderer'),
  publicDir: false,
  logLevel: 'warn',
  plugins: [svelte({ configFile: path.join(here, 'svelte.config.js') }), stubs()],
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: path.join(here, 'dist', 'report-app'),
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    lib: {
      entry: path.join(here, 'renderer', 'src', 'report-main.ts'),
      formats: ['iife'],
      name: 'HeaplensReport',
      fileName: () => 'report.js',
      cssFileName: 'report',
    },
  },
});
