/// <reference types="svelte" />
/// <reference types="vite/client" />

declare module 'virtual:heaplens/addr2line-wasm-url' {
  /** URL of the bundled addr2line WebAssembly module (see vite.config.ts) */
  const url: string;
  export default url;
}

declare module 'virtual:heaplens/report-app' {
  /** the renderer's report build (vite.report.config.ts → dist/report-app/), inlined into every report */
  const app: { js: string; css: string };
  export default app;
}
