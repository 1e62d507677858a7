// Svelte 5 config shared by Vite and svelte-check. TypeScript in components is stripped by Vite's esbuild/oxc.
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess(),
  compilerOptions: { runes: true },
};
