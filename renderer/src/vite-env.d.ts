/// <reference types="svelte" />
/// <reference types="vite/client" />

declare module 'virtual:heaplens/addr2line-wasm-url' {
  /** URL of the bundled addr2line WebAssembly module (see vite.config.ts) */
  const url: string;
  export default url;
}

declare module 'virtual:heaplens/report-viewer' {
  /** the single-file report's viewer script (dist/report/viewer.js, built by vite.config.ts's plugin) */
  const js: string;
  export default js;
}
