// A CycloneDX 1.5 SBOM of what the image ships: the production packages of package-lock.json
// (the dev ones with --dev), each with its version, purl, licence and the lockfile's SHA-512,
// and who depends on whom. Offline: reads the lockfile only. The same lockfile gives the same
// bytes (no timestamp; the serial number is derived from the lockfile's hash).
// Usage: node scripts/sbom.js [ROOT] [--dev] > zonekeeper.cdx.json
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const root = args.find((a) => !a.startsWith('--')) ?? process.cwd();
const withDev = args.includes('--dev');
const lockText = readFileSync(join(root, 'package-lock.json'), 'utf8');
const lock = JSON.parse(lockText);
const packages = lock.packages ?? {};
const top = packages[''] ?? {};

/** The package's name: its own field, else the last node_modules segment of its path. */
const nameOf = (path, entry) => entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
const purlOf = (name, version) => `pkg:npm/${name.startsWith('@') ? `%40${name.slice(1)}` : name}@${version}`;
const refOf = (path) => (path === '' ? 'root' : `${nameOf(path, packages[path])}@${packages[path].version}:${path}`);

/** Node's resolution from `from`'s folder up: the path of the package `name` it loads. */
function resolve(from, name) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const i = base.lastIndexOf('/node_modules/');
    base = i < 0 ? '' : base.slice(0, i);
  }
}

const dependenciesOf = (path) => Object.keys({ ...packages[path].dependencies, ...packages[path].optionalDependencies })
  .map((d) => resolve(path, d)).filter((p) => p !== undefined);

const included = Object.keys(packages).filter((p) => p !== '' && !packages[p].link && (withDev || !packages[p].dev)).sort();
const kept = new Set(included);

/** sha512-<base64> to CycloneDX's hex. */
function hashes(integrity) {
  const m = /^sha512-([A-Za-z0-9+/=]+)$/.exec(integrity ?? '');
  return m ? [{ alg: 'SHA-512', content: Buffer.from(m[1], 'base64').toString('hex') }] : [];
}

const components = included.map((path) => {
  const e = packages[path];
  const name = nameOf(path, e);
  const slash = name.startsWith('@') ? name.indexOf('/') : -1;
  return {
    type: 'library',
    'bom-ref': refOf(path),
    ...(slash > 0 ? { group: name.slice(0, slash), name: name.slice(slash + 1) } : { name }),
    version: e.version,
    scope: e.dev ? 'excluded' : e.optional ? 'optional' : 'required',
    purl: purlOf(name, e.version),
    ...(e.license ? { licenses: [{ expression: e.license }] } : {}),
    hashes: hashes(e.integrity),
  };
});

const dependencies = ['', ...included].map((path) => ({
  ref: refOf(path),
  dependsOn: dependenciesOf(path).filter((d) => kept.has(d)).map(refOf).sort(),
}));

const digest = createHash('sha256').update(lockText).digest('hex');
const serial = `urn:uuid:${digest.slice(0, 8)}-${digest.slice(8, 12)}-5${digest.slice(13, 16)}-8${digest.slice(17, 20)}-${digest.slice(20, 32)}`;

const bom = {
  bomFormat: 'CycloneDX',
  specVersion: '1.5',
  serialNumber: serial,
  version: 1,
  metadata: {
    tools: { components: [{ type: 'application', name: 'zonekeeper scripts/sbom.js' }] },
    component: {
      type: 'application', 'bom-ref': 'root', name: top.name ?? lock.name, version: top.version ?? lock.version,
      purl: purlOf(top.name ?? lock.name, top.version ?? lock.version), ...(top.license ? { licenses: [{ expression: top.license }] } : {}),
    },
  },
  components,
  dependencies,
};
process.stdout.write(`${JSON.stringify(bom, null, 2)}\n`);
