// Lint for src/ and test/: typescript-eslint's recommended rules, and the format (@stylistic:
// the house style, lines of at most 160; `npx eslint --fix` writes it). Import layering and
// cycles are dependency-cruiser's (.dependency-cruiser.cjs); dead exports are knip's. All run in `npm test`.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/server/ui/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  stylistic.configs.customize({ indent: 2, quotes: 'single', semi: true, commaDangle: 'always-multiline', braceStyle: '1tbs', arrowParens: true, quoteProps: 'as-needed' }),
  {
    rules: {
      '@stylistic/max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
      // Short literals and guards stay on one line; a ternary breaks where it reads best.
      '@stylistic/list-style': 'off',
      '@stylistic/max-statements-per-line': 'off',
      '@stylistic/multiline-ternary': 'off',
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true }],
      '@stylistic/generator-star-spacing': ['error', { before: true, after: false, method: { before: false, after: false } }],
    },
  },
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // Raw Kubernetes JSON is untyped by nature; it is validated where it enters.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      // JSON escaping and ANSI checks match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Time and yielding are the injected clock's (docs/design.md#dependency-rules): only common/clock.ts reads the system's time or yields.
    files: ['src/**/*.ts'],
    ignores: ['src/common/clock.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'read the injected Clock (common/clock.ts)' },
        { object: 'performance', property: 'now', message: 'read the injected Clock (common/clock.ts)' }],
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'new Date(clock.now()): read the injected Clock (common/clock.ts)' },
        { selector: "LogicalExpression > Identifier[name='Date']", message: 'a default clock is systemClock (common/clock.ts), not Date' }],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'wait on the injected Timers (common/clock.ts)' }, { name: 'setInterval', message: 'wait on the injected Timers (common/clock.ts)' },
        { name: 'setImmediate', message: 'yield through common/clock.ts (yieldTurn)' }],
    },
  },
);
