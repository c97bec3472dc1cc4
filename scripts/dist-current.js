// npm start's prestart: exits 0 when dist/ was built after every file under src/ (and
// tsconfig.json, package.json) last changed, 1 when it must be built again. Reads mtimes only:
// a start with a current dist/ skips tsc (~40 s). Usage: node scripts/dist-current.js [ROOT]
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? process.cwd();
const newest = (dir) => readdirSync(dir, { withFileTypes: true })
  .reduce((t, e) => Math.max(t, e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs), 0);

let built;
try {
  built = statSync(join(root, 'dist/cli.js')).mtimeMs;
} catch {
  console.error('dist/ is not built: building');
  process.exit(1);
}
const changed = Math.max(newest(join(root, 'src')), ...['tsconfig.json', 'package.json'].map((f) => statSync(join(root, f)).mtimeMs));
if (changed > built) {
  console.error('src/ changed after dist/ was built: building');
  process.exit(1);
}
