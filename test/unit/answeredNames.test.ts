import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutAnswered } from '../../src/extender/answeredNames.js';
import { BadRequest } from '../../src/extender/protocol.js';
import { parseArgs } from '../../src/server/extenderRoutes.js';

describe('names recognized from a filter answer', () => {
  const answered = { names: ['n-1', 'n-2'], text: '"n-1","n-2"' };
  const pod = '{"metadata":{"name":"p","uid":"u"}}';

  it('splits a body that ends with exactly those names', () => {
    const body = `{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2"]}\n`;
    const rest = withoutAnswered(body, answered)!;
    assert.deepEqual(JSON.parse(rest), { ...JSON.parse(body), NodeNames: [] });
  });

  it('leaves anything else to the whole-body parse', () => {
    for (const body of [
      `{"Pod":${pod},"NodeNames":["n-1","n-2","n-3"]}`, // more names
      `{"Pod":${pod},"NodeNames":["n-2","n-1"]}`, // another order
      `{"Pod":${pod},"NodeNames":["n-1","n-2"],"Nodes":null}`, // not the last member
      `{"Pod":${pod},"NodeNames":[ "n-1","n-2"]}`, // other spacing
      `"NodeNames":["n-1","n-2"]}`, // nothing before
    ]) assert.equal(withoutAnswered(body, answered), undefined, body);
  });

  it('names after an escaped quote are no top-level NodeNames: the whole body decides', () => {
    // Valid JSON whose last key is `a"NodeNames`, ending in the answered text; the real
    // NodeNames is empty.
    const sneaky = `{"Pod":${pod},"NodeNames":[],"a\\"NodeNames":["n-1","n-2"]}`;
    assert.deepEqual(JSON.parse(sneaky).NodeNames, []);
    assert.equal(withoutAnswered(sneaky, answered), undefined);
    const args = parseArgs(sneaky, undefined, [answered]);
    assert.deepEqual(args.NodeNames, []);
    // The names inside a string value: the body is no JSON, and the error is the whole body's.
    const broken = `{"Pod":${pod},"x":"a,"NodeNames":["n-1","n-2"]}`;
    assert.throws(() => parseArgs(broken, undefined, [answered]), (e: Error) => e instanceof BadRequest && /malformed JSON/.test(e.message));
    // The answered array itself, when the body is what kube-scheduler sends.
    assert.equal(parseArgs(`{"Pod":${pod},"Nodes":null,"NodeNames":["n-1","n-2"]}`, undefined, [answered]).NodeNames, answered.names);
  });
});
