// A JSON document a command reads (cli/json-document.ts): V8's parse errors in one whole line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonProblem, readJsonDocument } from '../../cli/json-document.js';
import { InputError } from '../../cli/errors.js';
import { scratchDir } from './cli-helpers.js';

const problem = (text: string) => {
  try {
    JSON.parse(text);
  } catch (err) {
    return jsonProblem((err as Error).message, text);
  }
  throw new Error('parsed');
};

describe('JSON errors', () => {
  it("drops the excerpt that carried the file's line breaks (the message was cut at the first)", () => {
    expect(problem('{"a": 1,\n "b": x\n}')).toBe("Unexpected token 'x'");
  });

  it('gives a position as line and column', () => {
    expect(problem('{"a": 1')).toBe("Expected ',' or '}' after property value at line 1, column 8");
    expect(problem('{\n"a": 1,\n}')).toBe('Expected double-quoted property name at line 3, column 1');
    expect(problem('{"a": 1}}')).toBe('Unexpected non-whitespace character after JSON at line 1, column 9');
  });

  it('names the file in one line', () => {
    const path = join(scratchDir(), 'broken.json');
    writeFileSync(path, '{\n  "schema": "feedlab.result/1",\n  "x": [1, 2,\n}\n');
    let err: unknown;
    try {
      readJsonDocument(path);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).line()).toBe(`${path}: not valid JSON: Unexpected token '}'`);
  });
});
