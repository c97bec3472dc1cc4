import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sectionNames, splitNodeNames } from '../../src/extender/wire/namesSection.js';
import { BadRequest } from '../../src/common/errors.js';
import { parseExtenderArgs } from '../../src/extender/wire/args.js';
import { parseArgs } from '../../src/extender/wire/args.js';
import { seededRandom } from '../support/random.js';

const pod = '{"metadata":{"name":"p","uid":"u"}}';

/** What parseArgs must agree with: the whole body through JSON.parse, or the error that gives. */
function wholeParse(text: string, maxNodes?: number): unknown {
  try {
    return parseExtenderArgs(JSON.parse(text), maxNodes);
  } catch (err) {
    return err instanceof SyntaxError ? 'malformed' : `${(err as BadRequest).field}: ${(err as Error).message}`;
  }
}
function viaParseArgs(text: string, maxNodes?: number): unknown {
  try {
    return parseArgs(text, maxNodes);
  } catch (err) {
    assert.ok(err instanceof BadRequest, String(err));
    return /malformed JSON/.test(err.message) ? 'malformed' : `${err.field}: ${err.message}`;
  }
}

describe('the NodeNames section of a body', () => {
  it('splits a body that ends with its NodeNames array', () => {
    const body = `{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2"]}\n`;
    const { rest, section } = splitNodeNames(body)!;
    assert.deepEqual(JSON.parse(rest), { ...JSON.parse(body), NodeNames: [] });
    assert.equal(section, '"n-1","n-2"');
    assert.equal(splitNodeNames('{"NodeNames":[]}')!.section, '');
  });

  it('leaves a body that does not end with it to the whole-body parse', () => {
    for (const body of [
      `{"Pod":${pod},"NodeNames":["n-1","n-2"],"Nodes":null}`, // not the last member
      '"NodeNames":["n-1","n-2"]}', // nothing before
      `{"Pod":${pod},"NodeNames":["n-1"]`, // not closed
      `{"Pod":${pod} "NodeNames":["n-1"]}`, // no comma before
    ]) assert.equal(splitNodeNames(body), undefined, body);
  });

  it('names are the answered array when the section is its text, else split when short and plain', () => {
    const answered = { names: ['n-1', 'n-2'], text: '"n-1","n-2"' };
    assert.equal(sectionNames('"n-1","n-2"', [answered])!.names, answered.names);
    assert.deepEqual(sectionNames('"n-2","n-1"', [answered]), { names: ['n-2', 'n-1'], checked: false, count: 2 });
    assert.deepEqual(sectionNames('', []), { names: [], checked: false, count: 0 });
    // Long names (JSON.parse is the faster there), escapes, control characters, quotes inside, spacing: JSON.parse.
    for (const section of ['"node-12345.example.internal"', '"n\\"1"', '"n\\u00e9"', '"n\u00011"', '"n-1", "n-2"', '"n-1","n"2"', '"n-1",', '1,2']) {
      assert.equal(sectionNames(section, []), undefined, section);
    }
  });

  it('takes apart at most one name past the bound, and counts the rest exactly', () => {
    assert.deepEqual(sectionNames('"a","b","c","d"', [], 2), { names: ['a', 'b', 'c'], checked: false, count: 4 });
    assert.deepEqual(sectionNames('"a","b"', [], 2), { names: ['a', 'b'], checked: false, count: 2 });
    // Past the bound and not plain: JSON.parse decides.
    assert.equal(sectionNames('"a","b","c","d\\"', [], 2), undefined);
    assert.equal(sectionNames('"a","b","c",d"', [], 2), undefined);
  });

  it('agrees with JSON.parse on random sections: names only for valid JSON, a prefix of its array, the exact count', () => {
    const alphabet = ['"', ',', 'a', '\\', 'é', '","'];
    const rand = seededRandom(7).below;
    let named = 0;
    for (let k = 0; k < 50_000; k++) {
      const section = `"${Array.from({ length: rand(10) }, () => alphabet[rand(alphabet.length)]).join('')}"`;
      let parsed: unknown[] | undefined;
      try {
        parsed = JSON.parse(`[${section}]`);
      } catch { /* not JSON */ }
      for (const max of [0, 1, 2, Infinity]) {
        const got = sectionNames(section, [], max);
        if (!got) continue;
        named++;
        assert.ok(parsed, `names from a section JSON rejects: ${section}`);
        assert.equal(got.count, parsed.length, section);
        assert.deepEqual(got.names, parsed.slice(0, Math.min(parsed.length, max + 1)), section);
      }
    }
    assert.ok(named > 1000, `${named} sections read without JSON.parse`);
  });

  it('a body of millions of short names near the size limit is a 400 naming the count (the pattern once overflowed the stack: a 500)', () => {
    const n = 4_000_000;
    const body = `{"Pod":${pod},"Nodes":null,"NodeNames":[${'"n-1",'.repeat(n - 1)}"n-1"]}`;
    assert.equal(viaParseArgs(body, 15_000), wholeParse(body, 15_000));
    assert.equal(viaParseArgs(body, 15_000), `NodeNames: ${n} nodes sent, more than the 15000 a request may carry for this cluster`);
  });

  it('short plain names are split apart, only the rest goes through JSON.parse; long ones through it whole', () => {
    const seen: string[] = [];
    const parse = JSON.parse;
    JSON.parse = ((t: string, r?: Parameters<typeof parse>[1]) => (seen.push(t), parse(t, r))) as typeof JSON.parse;
    try {
      assert.deepEqual(parseArgs(`{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2"]}`).NodeNames, ['n-1', 'n-2']);
      assert.equal(seen.filter((t) => t.includes('n-1')).length, 0);
      parseArgs(`{"Pod":${pod},"Nodes":null,"NodeNames":["node-1.example.internal"]}`);
      assert.equal(seen.filter((t) => t.includes('node-1.example')).length, 1);
    } finally {
      JSON.parse = parse;
    }
  });

  it('names after an escaped quote are no top-level NodeNames: the whole body decides', () => {
    const answered = { names: ['n-1', 'n-2'], text: '"n-1","n-2"' };
    // Valid JSON whose last key is `a"NodeNames`, ending in the answered text; the real NodeNames is empty.
    const sneaky = `{"Pod":${pod},"NodeNames":[],"a\\"NodeNames":["n-1","n-2"]}`;
    assert.deepEqual(JSON.parse(sneaky).NodeNames, []);
    assert.equal(splitNodeNames(sneaky), undefined);
    assert.deepEqual(parseArgs(sneaky, undefined, [answered]).NodeNames, []);
    // The names inside a string value: the body is no JSON, and the error is the whole body's.
    const broken = `{"Pod":${pod},"x":"a,"NodeNames":["n-1","n-2"]}`;
    assert.throws(() => parseArgs(broken, undefined, [answered]), (e: Error) => e instanceof BadRequest && /malformed JSON/.test(e.message));
    assert.equal(parseArgs(`{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2"]}`, undefined, [answered]).NodeNames, answered.names);
  });

  it('parseArgs answers what the whole-body parse answers, names and errors alike', () => {
    const bodies: [string, number?][] = [
      [`{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2","n-1"]}`],
      [`{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2","n-3"]}`, 2], // more names than the cluster allows
      [`{"Pod":${pod},"NodeNames":["n-1",""]}`], // an empty name
      [`{"Pod":${pod},"NodeNames":["n-1","${'x'.repeat(300)}"]}`], // a name too long (after a short first)
      [`{"Pod":${pod},"NodeNames":[1,2]}`],
      ['{"Pod":{"metadata":{"name":"p"}},"NodeNames":["n-1"]}'], // no uid: the Pod's error
      [`{"Pod":${pod},"NodeNames":["n-1"],"NodeNames":["n-2"]}`], // duplicate keys: the last wins
      [`{"Pod":${pod},"NodeNames":["a"]`], // malformed
      [`{"Pod":${pod},"x":"y,"NodeNames":["n-1"]}`], // malformed, though the tail looks right
      [`{"Pod":${pod},"Nodes":{"items":[]},"NodeNames":["n-1"]}`],
      ['{"NodeNames":["n-1"]}'], // no Pod
      [`{"Pod":${pod},"NodeNames":["é","n-2"]}`],
      [` {"Pod":${pod},"NodeNames":["n-1","n-2"]} \n\t`],
    ];
    for (const [body, max] of bodies) assert.deepEqual(viaParseArgs(body, max), wholeParse(body, max), body);
  });
});
