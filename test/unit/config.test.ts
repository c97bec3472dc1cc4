import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ConfigError, parseConfig } from '../../src/common/config.js';
import { chooseSource, DEMO_CLUSTER } from '../../src/main.js';

const keys = (o: unknown, prefix = ''): string[] =>
  o && typeof o === 'object' && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => keys(v, `${prefix}${k}.`))
    : [prefix.slice(0, -1)];

describe('config', () => {
  const shipped = parse(readFileSync(new URL('../../config/zonekeeper.yaml', import.meta.url), 'utf8'));

  it('config/zonekeeper.yaml lists every option with its default', () => {
    assert.deepEqual(keys(shipped).sort(), keys(parseConfig({})).sort());
    assert.deepEqual(parseConfig(shipped), parseConfig({}));
  });

  it('an unknown key is refused by name', () => {
    assert.throws(() => parseConfig({ placement: { zoneFallbak: 'strict' } }), (e: Error) => e instanceof ConfigError && /placement\.zoneFallbak: unknown key/.test(e.message));
    assert.throws(() => parseConfig({ nonsense: 1 }), /nonsense: unknown key/);
  });

  it('a bad value is refused with the key and the reason', () => {
    assert.throws(() => parseConfig({ placement: { zoneFallback: 'sometimes' } }), /placement\.zoneFallback: Invalid option/);
    assert.throws(() => parseConfig({ extender: { listen: 'localhost' } }), /extender\.listen: expected HOST:PORT/);
    assert.throws(() => parseConfig({ extender: { bodyLimitBytes: -1 } }), /extender\.bodyLimitBytes/);
  });

  it('keeps defaults for what is not set', () => {
    const c = parseConfig({ placement: { zoneFallback: 'adaptive' } });
    assert.equal(c.placement.zoneFallback, 'adaptive');
    assert.equal(c.placement.reservationTtlSeconds, 30);
    assert.equal(c.extender.listen, '127.0.0.1:8888');
    assert.equal(c.admin.listen, '127.0.0.1:9090');
  });
});

describe('where the cluster comes from', () => {
  const exists = (present: string[]) => (p: string) => present.includes(p);
  it('--snapshot, then --demo, then --kubeconfig, then $KUBECONFIG, then ~/.kube/config, then in-cluster, else the demo', () => {
    assert.deepEqual(chooseSource({ snapshot: 's.yaml', kubeconfig: 'k' }, {}, '/h', exists(['k'])), { kind: 'snapshot', path: 's.yaml' });
    assert.equal(chooseSource({ demo: true, kubeconfig: 'k' }, {}, '/h', exists(['k'])).kind, 'demo');
    assert.deepEqual(chooseSource({ kubeconfig: 'k' }, { KUBECONFIG: 'e' }, '/h', exists(['k', 'e'])), { kind: 'kubeconfig', path: 'k', from: '--kubeconfig' });
    assert.deepEqual(chooseSource({}, { KUBECONFIG: 'missing:e' }, '/h', exists(['e', '/h/.kube/config'])), { kind: 'kubeconfig', path: 'e', from: '$KUBECONFIG' });
    assert.deepEqual(chooseSource({}, {}, '/h', exists(['/h/.kube/config'])), { kind: 'kubeconfig', path: '/h/.kube/config', from: '~/.kube/config' });
    assert.deepEqual(chooseSource({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, '/h', exists(['/var/run/secrets/kubernetes.io/serviceaccount/token'])), { kind: 'in-cluster' });
    assert.deepEqual(chooseSource({}, {}, '/h', exists([])), { kind: 'demo', path: DEMO_CLUSTER, why: 'no kubeconfig and not in a cluster' });
  });
  it('a --kubeconfig that does not exist is an error, not a silent demo', () => {
    assert.throws(() => chooseSource({ kubeconfig: '/nope' }, {}, '/h', exists([])), /--kubeconfig \/nope: no such file/);
  });
});
