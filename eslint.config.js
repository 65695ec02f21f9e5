// Lint: typescript-eslint's recommended rules, React hooks rules, and fences
// that keep the layers apart (DESIGN.md §2): core/ is pure, client/ and
// server/ never import each other.
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const platformModules = ['react', 'react-dom', 'react-dom/*', 'zustand', 'zustand/*', 'recharts', 'socket.io', 'socket.io-client', 'webgpu', 'node:*', 'fs', 'path', 'os', 'crypto'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'public/data/', 'test-results/', 'playwright-report/', 'results/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['client/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    files: ['core/**/*.ts'],
    ignores: ['core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: platformModules, message: 'core/ is pure TypeScript: no DOM, sockets, GPU or Node modules.' },
            { group: ['**/client/**', '**/server/**', '**/shaders/**'], message: 'core/ depends on nothing in the project.' },
          ],
        },
      ],
    },
  },
  {
    files: ['client/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/server/**'], message: 'client/ and server/ talk only through core/protocol.ts.' }] }],
    },
  },
  {
    files: ['server/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/client/**'], message: 'client/ and server/ talk only through core/protocol.ts.' }] }],
    },
  },
);
