// A closed-loop load generator for `llmc serve` (or any OpenAI-compatible
// server): at each concurrency, keeps that many streaming /v1/completions
// requests in flight until N have finished, and reports requests/s, output
// tokens/s, TTFT and TPOT (p50, p99). The workload is fixed by the seed:
// prompts of random words, output lengths uniform in [max/4, max], EOS
// ignored. Only node itself is needed (fetch, streams).
// Usage: node load.mjs BASE_URL MODEL [--concurrency 1,8,32] [--requests 64]
//        [--max-prompt-words 200] [--max-tokens 128] [--seed 1] [--json]
const args = process.argv.slice(2);
const [base, model] = args;
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const levels = opt('--concurrency', '1,8,32').split(',').map(Number);
const requests = Number(opt('--requests', '64'));
const maxWords = Number(opt('--max-prompt-words', '200'));
const maxTokens = Number(opt('--max-tokens', '128'));
let seed = Number(opt('--seed', '1'));
const asJson = args.includes('--json');

const rand = () => {
  // mulberry32: the same workload on every run.
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const words = 'the of and a to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part'.split(' ');
const work = [...Array(requests).keys()].map(() => {
  const n = 8 + Math.floor(rand() * (maxWords - 8));
  const prompt = [...Array(n)].map(() => words[Math.floor(rand() * words.length)]).join(' ');
  const tokens = Math.max(2, Math.floor(maxTokens / 4 + rand() * (maxTokens * 3 / 4)));
  return { prompt, tokens };
});

async function one(w) {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, prompt: w.prompt, max_tokens: w.tokens, temperature: 0, ignore_eos: true,
      stream: true, stream_options: { include_usage: true } }),
    signal: AbortSignal.timeout(600_000),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let first = 0, last = 0, buffered = '', usage = null;
  const decoder = new TextDecoder();
  for await (const piece of res.body) {
    buffered += decoder.decode(piece, { stream: true });
    let cut;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const line = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices.length && chunk.choices[0].text) {
        const now = performance.now();
        if (!first) first = now;
        last = now;
      }
    }
  }
  const n = usage ? usage.completion_tokens : 0;
  return { ttft: (first - t0) / 1e3, tpot: n > 1 ? (last - first) / 1e3 / (n - 1) : 0, tokens: n };
}

const pct = (v, q) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.round(q * (s.length - 1)))] : 0;
};

const results = [];
await one({ prompt: 'warm up', tokens: 4 });
for (const c of levels) {
  const out = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < work.length) out.push(await one(work[next++]));
  };
  await Promise.all([...Array(c)].map(worker));
  const seconds = (performance.now() - t0) / 1e3;
  const tokens = out.reduce((s, r) => s + r.tokens, 0);
  results.push({
    concurrency: c, seconds, requests_per_s: out.length / seconds, output_tokens_per_s: tokens / seconds,
    ttft_ms_p50: 1e3 * pct(out.map((r) => r.ttft), 0.5), ttft_ms_p99: 1e3 * pct(out.map((r) => r.ttft), 0.99),
    tpot_ms_p50: 1e3 * pct(out.map((r) => r.tpot), 0.5), tpot_ms_p99: 1e3 * pct(out.map((r) => r.tpot), 0.99),
  });
}
if (asJson) {
  console.log(JSON.stringify({ base, model, requests, max_tokens: maxTokens, results }));
} else {
  console.log(`${requests} requests per level, prompts up to ${maxWords} words, outputs up to ${maxTokens} tokens`);
  console.log('conc   req/s  out tok/s   TTFT p50   TTFT p99   TPOT p50   TPOT p99');
  for (const r of results)
    console.log(`${String(r.concurrency).padStart(4)} ${r.requests_per_s.toFixed(2).padStart(7)} ${r.output_tokens_per_s.toFixed(1).padStart(10)}` +
      ` ${r.ttft_ms_p50.toFixed(0).padStart(8)}ms ${r.ttft_ms_p99.toFixed(0).padStart(8)}ms ${r.tpot_ms_p50.toFixed(1).padStart(8)}ms ${r.tpot_ms_p99.toFixed(1).padStart(8)}ms`);
}
