/// <reference types="svelte" />
/// <reference types="vite/client" />

declare module 'virtual:heaplens/addr2line-wasm-url' {
  /** URL of the bundled addr2line WebAssembly module (see vite.config.ts) */
  const url: string;
  export default url;
}
