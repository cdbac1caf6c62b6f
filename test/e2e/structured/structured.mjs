// Structured output, checked by outsiders: JSON Schema outputs by ajv
// (draft 2020-12, with ajv-formats), GBNF outputs by checkers written here
// from the grammars' definitions. The schemas bound every string and array:
// random-weight models pick among allowed tokens almost uniformly and would
// not close an unbounded string within the context (json_object mode is
// tested in test/unit/grammar and through the server).
//   node structured.mjs gen DATA_DIR OUT_DIR    writes requests.jsonl, cases.json
//   node structured.mjs check OUT_DIR OUTPUTS.jsonl MODEL
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const [mode, ...args] = process.argv.slice(2);
// Greedy, then sampling at three temperatures and several seeds: with
// random-weight models sampling walks every branch of a grammar.
const runs = [{ temperature: 0, seed: 0 }];
for (const temperature of [0.7, 1.0, 1.5])
  for (const seed of [1, 2, 3]) runs.push({ temperature, seed, top_p: 0.95 });

if (mode === 'gen') {
  const [data, out] = args;
  const requests = [], cases = [];
  const schemas = fs.readdirSync(path.join(data, 'schemas')).filter((f) => f.endsWith('.json')).sort();
  for (const file of schemas) {
    const schema = JSON.parse(fs.readFileSync(path.join(data, 'schemas', file), 'utf8'));
    for (const r of runs) {
      requests.push({ prompt: 'The record, as JSON:', max_new_tokens: 1024, ...r,
        response_format: { type: 'json_schema', json_schema: { name: file, schema, strict: true } } });
      cases.push({ kind: 'schema', name: file, ...r });
    }
  }
  for (const g of ['json', 'arithmetic', 'list']) {
    const text = fs.readFileSync(path.join(data, 'grammars', `${g}.gbnf`), 'utf8');
    for (const r of runs.slice(0, 4)) {
      requests.push({ prompt: 'Output:', max_new_tokens: 256, ...r, grammar: text });
      cases.push({ kind: 'gbnf', name: g, ...r });
    }
  }
  fs.writeFileSync(path.join(out, 'requests.jsonl'), requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
  fs.writeFileSync(path.join(out, 'cases.json'), JSON.stringify(cases));
  process.exit(0);
}

// Thrown where the text ran out: for a request that ended by length that
// is fine (the text is a prefix), anything else is a real error.
class End extends Error {}

// arithmetic.gbnf: root ::= (expr "=" ws term "\n")+
//   expr ::= term ([-+*/] term)*   term ::= ident | num | "(" ws expr ")" ws
//   ident ::= [a-z] [a-z0-9_]* ws   num ::= [0-9]+ ws   ws ::= [ \t\n]*
// ws may hold newlines, so a line's "\n" is the last character of the
// whitespace after its last term (a new line cannot start with whitespace).
function checkArithmetic(s, complete) {
  let i = 0;
  const need = () => { if (i >= s.length) throw new End(); };
  const ws = () => { while (i < s.length && ' \t\n'.includes(s[i])) i++; };
  const term = () => {
    need();
    if (s[i] === '(') { i++; ws(); expr(); need(); if (s[i] !== ')') throw new Error(`expected ) at ${i}`); i++; ws(); return; }
    if (/[a-z]/.test(s[i])) { i++; while (/[a-z0-9_]/.test(s[i] ?? '')) i++; ws(); return; }
    if (/[0-9]/.test(s[i])) { while (/[0-9]/.test(s[i] ?? '')) i++; ws(); return; }
    throw new Error(`expected a term at ${i}`);
  };
  const expr = () => { term(); while (i < s.length && '-+*/'.includes(s[i])) { i++; term(); } };
  let lines = 0;
  try {
    while (lines === 0 || i < s.length) {
      expr(); need();
      if (s[i] !== '=') throw new Error(`expected = at ${i}`);
      i++; ws(); term();
      if (s[i - 1] !== '\n') { need(); throw new Error(`expected a newline at ${i}`); }
      lines++;
    }
  } catch (e) {
    if (e instanceof End && !complete) return;
    throw e instanceof End ? new Error('cut short') : e;
  }
}

// A JSON value (json.gbnf's root is an object followed by ws), or for a
// request cut short a prefix of one.
function checkJsonPrefix(s, complete) {
  if (complete) {
    const v = JSON.parse(s);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    return;
  }
  let i = 0;
  const need = () => { if (i >= s.length) throw new End(); };
  const ws = () => { while (i < s.length && ' \t\n\r'.includes(s[i])) i++; };
  const lit = (w) => { for (const c of w) { need(); if (s[i] !== c) throw new Error(`expected ${w} at ${i}`); i++; } };
  const str = () => {
    lit('"');
    for (;;) {
      need();
      const c = s[i++];
      if (c === '"') return;
      if (c === '\\') { need(); const e = s[i++]; if (e === 'u') { for (let k = 0; k < 4; k++) { need(); if (!/[0-9a-fA-F]/.test(s[i++])) throw new Error('bad \\u'); } } else if (!'"\\/bfnrt'.includes(e)) throw new Error('bad escape'); }
      else if (c < ' ') throw new Error('control character in a string');
    }
  };
  const num = () => { const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(s.slice(i)); if (!m || !m[0]) throw new Error(`bad number at ${i}`); i += m[0].length; };
  const value = () => {
    ws(); need();
    const c = s[i];
    if (c === '{') { i++; ws(); need(); if (s[i] === '}') { i++; return; } for (;;) { ws(); str(); ws(); lit(':'); value(); ws(); need(); if (s[i] === '}') { i++; return; } lit(','); } }
    if (c === '[') { i++; ws(); need(); if (s[i] === ']') { i++; return; } for (;;) { value(); ws(); need(); if (s[i] === ']') { i++; return; } lit(','); } }
    if (c === '"') return str();
    if (c === 't') return lit('true');
    if (c === 'f') return lit('false');
    if (c === 'n') return lit('null');
    return num();
  };
  try {
    ws(); need();
    if (s[i] !== '{') throw new Error('not an object');
    value(); ws();
    if (i < s.length) throw new Error(`text after the value at ${i}`);
  } catch (e) {
    if (e instanceof End) return;
    throw e;
  }
}

function checkGbnf(name, text, complete) {
  if (name === 'json') return checkJsonPrefix(text, complete);
  if (name === 'arithmetic') return checkArithmetic(text, complete);
  const full = /^(- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)+$/u;
  const prefix = /^(- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)*(-( [^\r\n\x0b\x0c\x85\u2028\u2029]*)?)?$/u;
  if (!(complete ? full : prefix).test(text)) throw new Error('not a list');
}

const [out, outputs, model] = args;
const cases = JSON.parse(fs.readFileSync(path.join(out, 'cases.json'), 'utf8'));
const results = fs.readFileSync(outputs, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
if (results.length !== cases.length) throw new Error(`${results.length} outputs for ${cases.length} requests`);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const schemaDir = path.join(out, 'schemas');
const unbounded = new Set(['recursive.json']);
let failures = 0, checked = 0, cut = 0;
const distinct = new Map(), completed = new Map();
for (let i = 0; i < cases.length; i++) {
  const c = cases[i], r = results[i];
  const where = `${model}: line ${i + 1} (${c.kind} ${c.name}, T=${c.temperature}, seed ${c.seed})`;
  try {
    if (r.error) throw new Error(r.error);
    const complete = r.finish_reason === 'stop' || r.finish_reason === 'eos';
    if (c.kind === 'gbnf') {
      checkGbnf(c.name, r.text, complete);
    } else {
      if (!complete) {
        // A recursive schema has no bound a model must reach: one that
        // always prefers to recurse runs out of room. Its text must then be
        // a prefix of JSON; every other schema must be completed.
        if (!unbounded.has(c.name)) throw new Error(`ended by ${r.finish_reason} after ${r.output_ids.length} tokens`);
        checkJsonPrefix(r.text, false);
        cut++;
        continue;
      }
      const value = JSON.parse(r.text);
      const schema = JSON.parse(fs.readFileSync(path.join(schemaDir, c.name), 'utf8'));
      const validate = ajv.compile(schema);
      if (!validate(value)) throw new Error(ajv.errorsText(validate.errors));
    }
    checked++;
    const key = `${c.kind}/${c.name}`;
    completed.set(key, (completed.get(key) ?? 0) + 1);
    if (!distinct.has(key)) distinct.set(key, new Set());
    distinct.get(key).add(r.text);
  } catch (e) {
    failures++;
    console.error(`FAIL ${where}: ${e.message}\n  text: ${JSON.stringify(r.text)}`);
  }
}
// Sampling must explore: every case sees more than one distinct output.
for (const [key, texts] of distinct)
  if (texts.size < 2 && completed.get(key) > 1) { failures++; console.error(`FAIL ${model}: ${key}: all outputs equal`); }
// Every schema and grammar has complete, valid outputs.
for (const c of new Set(cases.map((c) => `${c.kind}/${c.name}`)))
  if (!distinct.has(c)) { failures++; console.error(`FAIL ${model}: ${c}: no output was complete`); }
console.log(`${model}: ${checked}/${cases.length} outputs complete and valid, ${cut} cut short on a recursive schema (valid JSON prefixes), ${failures} failures`);
process.exit(failures ? 1 : 0);
