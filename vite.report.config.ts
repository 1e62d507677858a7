// Vite config for the single-file report's viewer (report/viewer): one self-contained IIFE script, no imports,
// no assets, that report/html.ts inlines into every report. Output: dist/report/viewer.js (the CLI reads it),
// beside tsc's output of report/*.ts (so the folder is not emptied).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: path.join(here, 'report', 'viewer'),
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: path.join(here, 'dist', 'report'),
    emptyOutDir: false, // dist/report also holds tsc's output of report/*.ts
    target: 'es2020',
    minify: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    lib: {
      entry: path.join(here, 'report', 'viewer', 'main.ts'),
      formats: ['iife'],
      name: 'HeaplensReportViewer',
      fileName: () => 'viewer.js',
    },
  },
});
