// Lint: typescript-eslint's recommended rules, React hooks rules, and the import fences that keep the layers apart,
// tests included. The rules are stated once, in docs/design.md, "Layers"; each fence's message says which it enforces.
// Each file falls in exactly one fence block below (a later block for the same file would replace the rule, not add to
// it).
import { readFileSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const platformModules = [
  'react',
  'react-dom',
  'react-dom/*',
  'zustand',
  'zustand/*',
  'recharts',
  'socket.io',
  'socket.io-client',
  'webgpu',
  'node:*',
  'fs',
  'path',
  'os',
  'crypto',
];

const PURE_CORE = {
  group: platformModules,
  message: 'core/ is pure TypeScript: no DOM, sockets, GPU or Node modules.',
};
const ABOVE_CORE = {
  group: ['**/client/**', '**/server/**', '**/shaders/**', '**/scripts/**', '**/e2e/**'],
  message: 'core/ depends on nothing in the project above it.',
};
const SOCKET_CLIENT = {
  group: ['socket.io-client', 'socket.io-client/*'],
  message: 'Only client/net/ opens sockets: connect through client/net/socket.ts.',
};
const NO_SCRIPTS = {
  group: ['**/scripts/**'],
  message: 'scripts/ are entry points and tools: client/ and server/ never import them.',
};
const NO_SERVER = { group: ['**/server/**'], message: 'client/ and server/ talk only through core/protocol.ts.' };
const NO_CLIENT = { group: ['**/client/**'], message: 'client/ and server/ talk only through core/protocol.ts.' };
const ONLY_CLIENT_NET = {
  regex: '(^|/)client/(?!net/)',
  message: "server's tests play a tab through client/net/ only.",
};
// From client/net/, `../x` is another client folder (`../i18n` is allowed: messages for the page); `../../core` is core.
const NET_ONLY_CORE = {
  regex: '^\\.\\./(?!\\.\\./|i18n(/|$))',
  message:
    'client/net/ imports only core/ and client/i18n/ (and socket.io-client): report to the UI through an interface it defines.',
};
const NO_SERVER_TESTING = {
  group: ['**/server/testing/**'],
  message: "scripts/ use the project's public modules (server/local.ts, client/net), not server/testing/.",
};

/** Source files may be at most this long, except those in scripts/size-allowlist.json, each with its reason. */
const MAX_LINES = 400;
const sizeAllowlist = Object.keys(
  JSON.parse(readFileSync(new URL('./scripts/size-allowlist.json', import.meta.url), 'utf8')).files,
);

// From a folder of server/, `../x` is another server folder; `../../core` is core.
const SERVER_ONLY_CORE = {
  regex: '^\\.\\./(?!\\.\\./)',
  message: 'server/protocol/ and server/model/ import only core/ (and their own folder).',
};
const SERVER_NO_TRANSPORT = {
  regex: '^\\.\\./(sockets|http|cluster)(/|$)',
  message: 'server/run/ and server/persistence/ know no transport: no sockets/, http/ or cluster/.',
};
const NO_SOCKET_IO = {
  group: ['socket.io', 'socket.io/*'],
  message: 'server/run/ and server/persistence/ know no sockets.',
};
const SERVER_CORE_ONLY_DIRS = ['server/protocol/**/*.ts', 'server/model/**/*.ts'];
const SERVER_STATE_DIRS = ['server/run/**/*.ts', 'server/persistence/**/*.ts'];

/** One fence: the import patterns refused in `files` (less `ignores`). */
function fence(files, patterns, ignores = []) {
  return { files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}
const tests = ['**/*.test.ts'];

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
    files: ['**/*.{ts,tsx,mjs,js}'],
    rules: { 'max-lines': ['error', { max: MAX_LINES, skipBlankLines: false, skipComments: false }] },
  },
  { files: sizeAllowlist, rules: { 'max-lines': 'off' } },
  {
    files: ['client/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  fence(['core/**/*.ts'], [PURE_CORE, ABOVE_CORE], tests),
  fence(['core/**/*.test.ts'], [ABOVE_CORE, SOCKET_CLIENT]),
  fence(['client/net/**/*.ts'], [NET_ONLY_CORE, NO_SERVER, NO_SCRIPTS]),
  fence(['client/**/*.{ts,tsx}'], [NO_SERVER, NO_SCRIPTS, SOCKET_CLIENT], ['client/net/**']),
  fence(SERVER_CORE_ONLY_DIRS, [NO_CLIENT, NO_SCRIPTS, SOCKET_CLIENT, SERVER_ONLY_CORE], tests),
  fence(SERVER_STATE_DIRS, [NO_CLIENT, NO_SCRIPTS, SOCKET_CLIENT, SERVER_NO_TRANSPORT, NO_SOCKET_IO], tests),
  fence(
    ['server/**/*.ts'],
    [NO_CLIENT, NO_SCRIPTS, SOCKET_CLIENT],
    [...tests, 'server/testing/**', ...SERVER_CORE_ONLY_DIRS, ...SERVER_STATE_DIRS],
  ),
  fence(['server/**/*.test.ts', 'server/testing/**/*.ts'], [ONLY_CLIENT_NET, NO_SCRIPTS, SOCKET_CLIENT]),
  fence(['scripts/**/*.{ts,mjs}'], [NO_SERVER_TESTING, SOCKET_CLIENT]),
  fence(['e2e/**/*.ts'], [NO_SERVER_TESTING, SOCKET_CLIENT]),
);
