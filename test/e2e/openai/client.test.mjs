// The official `openai` npm client against a running `llmc serve`.
// Usage: node client.test.mjs BASE_URL MODEL_NAME
// Every request is bounded; the whole run gives up after 240 s.
import OpenAI from 'openai';
import assert from 'node:assert/strict';
import { check, runChecks } from './checks.mjs';

const [base, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', timeout: 60_000, maxRetries: 0 });
setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 240_000).unref();


check('models.list names the served model', async () => {
  const list = await client.models.list();
  assert.ok(list.data.some((m) => m.id === model), JSON.stringify(list.data));
});

check('completions.create', async () => {
  const r = await client.completions.create({ model, prompt: 'A journey of a thousand miles', max_tokens: 16, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(typeof r.choices[0].text, 'string');
  assert.ok(r.choices[0].text.length > 0);
  assert.equal(r.usage.completion_tokens, 16);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 16);
  assert.equal(r.choices[0].finish_reason, 'length');
});

const chatReq = { model, messages: [{ role: 'user', content: 'Tell me a fortune' }], max_tokens: 20, temperature: 0 };

check('chat.completions.create, and the same streamed with include_usage', async () => {
  const r = await client.chat.completions.create(chatReq);
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  const full = r.choices[0].message.content;
  assert.equal(typeof full, 'string');
  const stream = await client.chat.completions.create({ ...chatReq, stream: true, stream_options: { include_usage: true } });
  let text = '', role = null, usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.role) role = c.delta.role;
      if (c.delta.content) text += c.delta.content;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.equal(role, 'assistant');
  assert.equal(text, full);
  assert.equal(finish, r.choices[0].finish_reason);
  assert.ok(usage, 'the last chunk carries usage');
  assert.equal(usage.completion_tokens, r.usage.completion_tokens);
  assert.equal(usage.prompt_tokens, r.usage.prompt_tokens);
});

check('n=2 gives two choices', async () => {
  const r = await client.chat.completions.create({ ...chatReq, n: 2, temperature: 1, seed: 5 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
  const c = await client.completions.create({ model, prompt: 'Hello', n: 2, max_tokens: 8, temperature: 1, seed: 5 });
  assert.equal(c.choices.length, 2);
});

check('logprobs and top_logprobs', async () => {
  const r = await client.chat.completions.create({ ...chatReq, max_tokens: 6, logprobs: true, top_logprobs: 3 });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, r.usage.completion_tokens);
  for (const t of content) {
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 3);
    assert.ok(Array.isArray(t.bytes));
    // Greedy: the chosen token is the most likely one.
    assert.ok(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-6);
  }
  const c = await client.completions.create({ model, prompt: 'Hello', max_tokens: 5, temperature: 0, logprobs: 2 });
  const lp = c.choices[0].logprobs;
  assert.equal(lp.tokens.length, 5);
  assert.equal(lp.token_logprobs.length, 5);
  assert.equal(Object.keys(lp.top_logprobs[0]).length >= 1, true);
});

check('stop ends the text before the stop string', async () => {
  const free = await client.completions.create({ model, prompt: 'A journey of a thousand miles', max_tokens: 32, temperature: 0 });
  assert.ok(free.choices[0].text.includes('\n'), 'the greedy text has a newline to stop at');
  const r = await client.completions.create({ model, prompt: 'A journey of a thousand miles', max_tokens: 32, temperature: 0, stop: ['\n'] });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.ok(!r.choices[0].text.includes('\n'));
  assert.equal(r.choices[0].text, free.choices[0].text.split('\n')[0]);
});

check('a seed makes sampling reproducible', async () => {
  const req = { model, prompt: 'The', max_tokens: 24, temperature: 1.0, seed: 42, ignore_eos: true };
  const a = await client.completions.create(req);
  const b = await client.completions.create(req);
  const c = await client.completions.create({ ...req, seed: 43 });
  assert.equal(a.choices[0].text, b.choices[0].text);
  assert.notEqual(a.choices[0].text, c.choices[0].text);
});

check('an invalid parameter is a BadRequestError naming it', async () => {
  await assert.rejects(
    client.chat.completions.create({ ...chatReq, top_p: 5 }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.param, 'top_p');
      assert.match(err.message, /top_p/);
      return true;
    });
  await assert.rejects(client.completions.create({ model: 'no-such-model', prompt: 'x' }),
    (err) => err instanceof OpenAI.NotFoundError);
});

check('response_format json_schema: the content is JSON of the schema, streamed or not', async () => {
  const schema = {
    type: 'object',
    properties: { fortune: { type: 'string', maxLength: 24 }, lucky: { type: 'integer' },
                  mood: { enum: ['good', 'bad'] } },
    required: ['fortune', 'lucky', 'mood'], additionalProperties: false,
  };
  const req = { ...chatReq, max_tokens: 200, response_format: { type: 'json_schema', json_schema: { name: 'fortune', schema, strict: true } } };
  for (const temperature of [0, 1]) {
    const r = await client.chat.completions.create({ ...req, temperature, seed: 3 });
    assert.equal(r.choices[0].finish_reason, 'stop', r.choices[0].message.content);
    const v = JSON.parse(r.choices[0].message.content);
    assert.deepEqual(Object.keys(v), ['fortune', 'lucky', 'mood']);
    assert.ok(Number.isInteger(v.lucky) && ['good', 'bad'].includes(v.mood));
    const stream = await client.chat.completions.create({ ...req, temperature, seed: 3, stream: true });
    let text = '';
    for await (const chunk of stream) for (const c of chunk.choices) if (c.delta.content) text += c.delta.content;
    assert.equal(text, r.choices[0].message.content);
  }
  // vLLM's field, passed through by the SDK: strict objects without strict.
  const loose = { ...schema };
  delete loose.additionalProperties;
  const d = await client.chat.completions.create({ ...chatReq, max_tokens: 200, temperature: 1, seed: 5,
    response_format: { type: 'json_schema', json_schema: { name: 'fortune', schema: loose } },
    disable_additional_properties: true });
  assert.equal(d.choices[0].finish_reason, 'stop', d.choices[0].message.content);
  assert.deepEqual(Object.keys(JSON.parse(d.choices[0].message.content)), ['fortune', 'lucky', 'mood']);
  const o = await client.completions.create({ model, prompt: 'JSON:', max_tokens: 200, temperature: 1, seed: 9, response_format: { type: 'json_object' } });
  const parsed = JSON.parse(o.choices[0].text);
  assert.equal(typeof parsed, 'object');
  assert.ok(!Array.isArray(parsed) && parsed !== null);
});

check('an unsupported schema keyword is a BadRequestError naming it', async () => {
  const schema = { type: 'object', properties: { n: { type: 'number', not: { const: 3 } } } };
  await assert.rejects(
    client.chat.completions.create({ ...chatReq, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }),
    (e) => e.status === 400 && /'not'/.test(e.message) && e.param === 'response_format');
  await assert.rejects(
    client.chat.completions.create({ ...chatReq, response_format: { type: 'xml' } }),
    (e) => e.status === 400 && /response_format.type/.test(e.message));
});

check('32 concurrent streams equal the same requests sent alone; nothing left running', async () => {
  const req = (i) => ({ model, prompt: `Fortune number ${i}:`, max_tokens: 10 + (i % 5), temperature: 0, stream: true });
  const collect = async (i) => {
    let text = '';
    for await (const chunk of await client.completions.create(req(i)))
      for (const c of chunk.choices) text += c.text;
    return text;
  };
  const alone = [];
  for (let i = 0; i < 32; ++i) alone.push(await collect(i));
  const together = await Promise.all([...Array(32).keys()].map(collect));
  assert.deepEqual(together, alone);
  let metrics = '';
  for (let t = 0; t < 100; ++t) {
    metrics = await (await fetch(`${base}/metrics`)).text();
    if (/llmc:num_requests_running\{[^}]*\} 0\n/.test(metrics) && /llmc:kv_cache_usage_perc\{[^}]*\} 0\n/.test(metrics)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`still running or holding KV blocks:\n${metrics}`);
});

await runChecks();
