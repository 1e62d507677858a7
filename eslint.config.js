// ESLint: typescript-eslint's recommended rules plus the two the project asks for (no `any`, type-only imports),
// and eslint-plugin-svelte for the renderer's components.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'test-results/',
      'playwright-report/',
      'fixtures/**/*.js',
      'native-tools/**/build/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // typeof import('…') types the modules the CLI loads lazily (so `top` starts fast); keep those.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      // `let x = fallback; try { x = … }` is how readers keep a default when a step throws.
      'no-useless-assignment': 'off',
      // Local Maps/Sets inside functions are scratch data, not state; the rule cannot tell them apart.
      'svelte/prefer-svelte-reactivity': 'off',
      // Sanitizers and parsers match control characters on purpose (to mark or reject them).
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
);
