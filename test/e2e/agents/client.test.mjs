// Agent clients against `llmc serve`'s tool calls: the openai client (tools,
// streamed tool calls, runTools), LangChain's ChatOpenAI.bindTools, the
// Vercel AI SDK's generateText with tools and the OpenAI Agents SDK. A
// random-weight model calls tools only when forced (tool_choice required or
// named) or steered (llmc's `grammar` with tool_choice auto); every call's
// arguments are checked against the tool's schema with ajv.
// Usage: node client.test.mjs BASE_URL MODEL_NAME
import OpenAI from 'openai';
import Ajv from 'ajv';
import assert from 'node:assert/strict';
import { check, runChecks } from './checks.mjs';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { generateText, tool as aiTool, jsonSchema } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent, run, tool as agentTool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import { z } from 'zod';

const [base, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', timeout: 60_000, maxRetries: 0 });
setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 270_000).unref();

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { type: 'string', enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const timeSchema = {
  type: 'object',
  properties: { zone: { type: 'string', maxLength: 8 } },
  required: ['zone'],
  additionalProperties: false,
};
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherSchema } },
  { type: 'function', function: { name: 'get_time', description: 'Time in a zone', parameters: timeSchema } },
];
const ajv = new Ajv({ strict: false });
const validators = { get_weather: ajv.compile(weatherSchema), get_time: ajv.compile(timeSchema) };
const validArgs = (name, args) => {
  const v = validators[name];
  assert.ok(v, `unknown tool ${name}`);
  assert.ok(v(args), `${name} arguments ${JSON.stringify(args)}: ${ajv.errorsText(v.errors)}`);
};
const checkCall = (c) => {
  assert.equal(c.type, 'function');
  assert.equal(typeof c.id, 'string');
  assert.ok(c.id.length > 0);
  assert.equal(typeof c.function.arguments, 'string');
  validArgs(c.function.name, JSON.parse(c.function.arguments));
};
const noThinking = { chat_template_kwargs: { enable_thinking: false } };
const ask = { model, messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools, max_tokens: 200, temperature: 0, ...noThinking };

/// A streamed chat reply put together as the non-streamed one reads.
async function streamed(req) {
  const stream = await client.chat.completions.create({ ...req, stream: true });
  const calls = [];
  let content = '', finish = null;
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    if (ch.delta.content) content += ch.delta.content;
    for (const d of ch.delta.tool_calls ?? []) {
      assert.equal(typeof d.index, 'number', JSON.stringify(d));
      if (!calls[d.index]) {
        assert.ok(d.id && d.type === 'function' && d.function?.name, `first delta of a call: ${JSON.stringify(d)}`);
        calls[d.index] = { id: d.id, type: d.type, function: { name: d.function.name, arguments: '' } };
      } else {
        assert.equal(d.function?.name, undefined, 'the name comes once');
      }
      calls[d.index].function.arguments += d.function?.arguments ?? '';
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  return { content, calls, finish };
}


// Streamed and whole replies are compared exactly only where a grammar fixes
// the text: a second request reuses the cached prompt prefix, and prefilling
// fewer tokens may move a random model's near-tied logits.
check('openai: tool_choice required, one call, whole and streamed', async () => {
  const req = { ...ask, tool_choice: 'required', parallel_tool_calls: false };
  const r = await client.chat.completions.create(req);
  const m = r.choices[0].message;
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  assert.equal(m.content, null);
  assert.equal(m.tool_calls.length, 1);
  m.tool_calls.forEach(checkCall);
  const s = await streamed(req);
  assert.equal(s.finish, 'tool_calls');
  assert.equal(s.content, '');
  assert.equal(s.calls.length, 1);
  s.calls.forEach(checkCall);
});

check('openai: a named function', async () => {
  const r = await client.chat.completions.create({ ...ask, tool_choice: { type: 'function', function: { name: 'get_time' } } });
  const calls = r.choices[0].message.tool_calls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].function.name, 'get_time');
  checkCall(calls[0]);
});

check('openai: auto steered by a grammar: text, then a call (whole and streamed)', async () => {
  const call = '<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Paris\\", \\"unit\\": \\"c\\"}}\\n</tool_call>';
  const req = { ...ask, tool_choice: 'auto', grammar: `root ::= "Let me check. " "${call}"` };
  const r = await client.chat.completions.create(req);
  const m = r.choices[0].message;
  assert.equal(m.content, 'Let me check. ');
  assert.equal(m.tool_calls.length, 1);
  checkCall(m.tool_calls[0]);
  assert.deepEqual(JSON.parse(m.tool_calls[0].function.arguments), { city: 'Paris', unit: 'c' });
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  const s = await streamed(req);
  assert.equal(s.content, m.content);
  assert.equal(s.finish, 'tool_calls');
  assert.equal(s.calls[0].function.arguments, m.tool_calls[0].function.arguments);
  // Plain text stays text.
  const t = await client.chat.completions.create({ ...ask, tool_choice: 'auto', grammar: 'root ::= "No tools needed."' });
  assert.equal(t.choices[0].message.content, 'No tools needed.');
  assert.equal(t.choices[0].message.tool_calls, undefined);
  assert.equal(t.choices[0].finish_reason, 'stop');
});

check('openai: bad tool requests are 400s naming the field', async () => {
  for (const [body, param] of [
    [{ ...ask, tools: [] }, 'tools'],
    [{ ...ask, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
    [{ model, messages: ask.messages, tool_choice: 'required' }, 'tool_choice'],
    [{ ...ask, tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'object', properties: { a: { type: 'string', not: { const: 'x' } } } } } }], tool_choice: 'required' }, 'tools'],
  ]) {
    await assert.rejects(client.chat.completions.create(body), (e) => e.status === 400 && e.param === param, JSON.stringify(body).slice(0, 120));
  }
});

check('openai: runTools calls a local function and the history goes back', async () => {
  const seen = [];
  const runner = client.chat.completions.runTools({
    ...ask,
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherSchema, parse: JSON.parse,
      function: (args) => { validArgs('get_weather', args); seen.push(args); return { temperature: 21 }; } } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  await runner.done();
  assert.equal(seen.length, 1);
  const messages = runner.messages;
  const toolMsg = messages.find((m) => m.role === 'tool');
  assert.ok(toolMsg && toolMsg.tool_call_id, JSON.stringify(messages));
  // The conversation with the call and its result, answered as text.
  const next = await client.chat.completions.create({ model, messages: [...messages, { role: 'user', content: 'Thanks.' }], tools, max_tokens: 8, ...noThinking });
  assert.equal(typeof next.choices[0].message.content, 'string');
});

const responseTools = tools.map((t) => ({ type: 'function', ...t.function, strict: true }));

check('openai: responses.create with a forced call, then the call\'s output, and streamed', async () => {
  const req = { model, input: 'What is the weather in Paris?', instructions: 'Use the tools.', tools: responseTools,
    tool_choice: 'required', parallel_tool_calls: false, max_output_tokens: 200, temperature: 0, ...noThinking };
  const r = await client.responses.create(req);
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'completed');
  const calls = r.output.filter((o) => o.type === 'function_call');
  assert.equal(calls.length, 1, JSON.stringify(r.output));
  assert.ok(calls[0].call_id && calls[0].id);
  validArgs(calls[0].name, JSON.parse(calls[0].arguments));
  assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
  // Streamed: the same call, and the events in order.
  const types = [];
  let completed = null, args = '';
  for await (const ev of await client.responses.create({ ...req, stream: true })) {
    types.push(ev.type);
    if (ev.type === 'response.function_call_arguments.delta') args += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response;
  }
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.ok(types.includes('response.output_item.added') && types.includes('response.output_item.done'), types.join());
  const streamedCalls = completed.output.filter((o) => o.type === 'function_call');
  assert.equal(streamedCalls.length, 1);
  assert.equal(streamedCalls[0].arguments, args);
  validArgs(streamedCalls[0].name, JSON.parse(args));
  // The call and its output sent back (stateless), answered as text.
  const next = await client.responses.create({ model, input: [
    { role: 'user', content: 'What is the weather in Paris?' },
    { type: 'function_call', call_id: calls[0].call_id, name: calls[0].name, arguments: calls[0].arguments },
    { type: 'function_call_output', call_id: calls[0].call_id, output: 'sunny' },
  ], tools: responseTools, max_output_tokens: 6, ...noThinking });
  // A random model may end by itself within the 6 tokens.
  assert.ok(next.status === 'completed' || next.incomplete_details.reason === 'max_output_tokens', JSON.stringify(next));
  assert.equal(typeof next.output_text, 'string');
  await assert.rejects(client.responses.create({ model, input: 'x', previous_response_id: 'resp_1' }),
    (e) => e.status === 400 && e.param === 'previous_response_id');
});

check('LangChain: ChatOpenAI.bindTools (invoke and stream)', async () => {
  const llm = new ChatOpenAI({ model, apiKey: 'unused', configuration: { baseURL: `${base}/v1` }, temperature: 0, maxTokens: 200, streaming: false, maxRetries: 0, modelKwargs: noThinking });
  const weather = lcTool(async ({ city }) => `sunny in ${city}`, {
    name: 'get_weather', description: 'Weather in a city',
    schema: z.object({ city: z.string().max(12), unit: z.enum(['c', 'f']) }).strict(),
  });
  const bound = llm.bindTools([weather], { tool_choice: 'required', parallel_tool_calls: false });
  const msg = await bound.invoke('What is the weather in Paris?');
  assert.equal(msg.tool_calls.length, 1);
  assert.equal(msg.tool_calls[0].name, 'get_weather');
  validArgs('get_weather', msg.tool_calls[0].args);
  let full;
  for await (const chunk of await bound.stream('What is the weather in Paris?')) full = full ? full.concat(chunk) : chunk;
  assert.equal(full.tool_calls.length, 1);
  validArgs(full.tool_calls[0].name, full.tool_calls[0].args);
});

check('AI SDK: generateText with tools runs the tool', async () => {
  const provider = createOpenAICompatible({ name: 'llmc', baseURL: `${base}/v1`, apiKey: 'unused' });
  const ran = [];
  const result = await generateText({
    model: provider(model),
    prompt: 'What time is it in Oslo?',
    tools: { get_time: aiTool({ description: 'Time in a zone', inputSchema: jsonSchema(timeSchema), execute: async (a) => { ran.push(a); return '12:00'; } }) },
    toolChoice: 'required',
    maxOutputTokens: 200,
    temperature: 0,
    maxRetries: 0,
    providerOptions: { llmc: noThinking },
  });
  assert.equal(result.toolCalls.length >= 1, true, JSON.stringify(result.content));
  for (const c of result.toolCalls) validArgs(c.toolName, c.input);
  assert.equal(ran.length, result.toolCalls.length);
  assert.equal(result.toolResults[0].output, '12:00');
});

for (const api of ['chat_completions', 'responses'])
check(`OpenAI Agents SDK: one tool-using turn over ${api}`, async () => {
  setTracingDisabled(true);
  setOpenAIAPI(api);
  setDefaultOpenAIClient(client);
  const ran = [];
  const agent = new Agent({
    name: 'clock',
    instructions: 'Answer with the time.',
    model,
    tools: [agentTool({ name: 'get_time', description: 'Time in a zone', parameters: z.object({ zone: z.string().max(8) }),
      execute: async (a) => { ran.push(a); return '12:00'; } })],
    modelSettings: { toolChoice: 'required', maxTokens: 200, temperature: 0, providerData: noThinking },
    toolUseBehavior: 'stop_on_first_tool',
  });
  const result = await run(agent, 'What time is it in Oslo?', { maxTurns: 2 });
  assert.equal(ran.length, 1);
  validArgs('get_time', ran[0]);
  assert.equal(result.finalOutput, '12:00');
});

await runChecks();
