import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';

// The layout page (/ui): static HTML, CSS and JS read once from the package (the build
// copies src/server/ui to dist/server/ui). The page holds nothing about the cluster: all it
// shows comes from /debug/layouts, behind the admin listener's authorization like every
// /debug view; with admin.authorization: kubernetes the page asks for a bearer token.

const ASSETS = {
  '/ui': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/layout.js': { file: 'layout.js', type: 'text/javascript; charset=utf-8' },
  '/ui/layout.css': { file: 'layout.css', type: 'text/css; charset=utf-8' },
} as const;

/** Scripts and styles from this origin only, no inline code: a hostile name in the data can only ever be text. */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function addLayoutPage(app: Hono): void {
  const dir = new URL('./ui/', import.meta.url);
  for (const [path, asset] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(asset.file, dir), 'utf8');
    app.get(path, (c) => c.body(body, 200, {
      'content-type': asset.type, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache',
    }));
  }
  app.get('/ui/', (c) => c.redirect('/ui'));
  // The admin port's root leads to the page: what a browser opened on it expects.
  app.get('/', (c) => c.redirect('/ui'));
}
