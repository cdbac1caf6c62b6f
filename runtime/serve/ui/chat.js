// llmc serve's chat page: a conversation with the served model over
// /v1/chat/completions, streamed; reasoning apart in a collapsible block;
// markdown rendered from escaped text; the sampling settings kept in
// localStorage. Plain script, no build step, no dependencies.
'use strict';

const $ = (id) => document.getElementById(id);
const conversation = []; // {role, content} as the API takes them
let controller = null; // the reply being streamed

const settingIds = ['system', 'temperature', 'top_p', 'top_k', 'max_tokens', 'seed', 'api_key', 'extra'];
for (const id of settingIds) {
  const saved = localStorage.getItem('llmc.' + id);
  if (saved !== null) $(id).value = saved;
  $(id).addEventListener('change', () => localStorage.setItem('llmc.' + id, $(id).value));
}

$('toggle-settings').addEventListener('click', () => {
  const s = $('settings');
  s.hidden = !s.hidden;
  $('toggle-settings').setAttribute('aria-expanded', String(!s.hidden));
});
$('new-chat').addEventListener('click', () => {
  if (controller) controller.abort();
  conversation.length = 0;
  $('messages').replaceChildren();
});

function headers() {
  const h = { 'Content-Type': 'application/json' };
  if ($('api_key').value) h.Authorization = 'Bearer ' + $('api_key').value;
  return h;
}

fetch('/v1/models', { headers: headers() })
  .then((r) => r.json())
  .then((j) => { $('model').textContent = j.data?.[0]?.id ?? ''; })
  .catch(() => {});

// --- markdown: the text is escaped first, then a small subset is marked up.
const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function inline(s) {
  return s
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    .replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2" target="_blank" rel="noopener">$1</a>');
}

function markdown(text) {
  const out = [];
  const parts = text.split(/```/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) { // a code block (possibly still open while streaming)
      const nl = part.indexOf('\n');
      out.push('<pre><code>' + escapeHtml(nl >= 0 ? part.slice(nl + 1) : part) + '</code></pre>');
      return;
    }
    let list = null;
    const close = () => { if (list) { out.push(`</${list}>`); list = null; } };
    for (const raw of escapeHtml(part).split('\n')) {
      let m;
      if ((m = raw.match(/^(#{1,6})\s+(.*)$/))) {
        close();
        out.push(`<h${m[1].length + 2}>${inline(m[2])}</h${m[1].length + 2}>`);
      } else if ((m = raw.match(/^\s*[-*]\s+(.*)$/)) || (m = raw.match(/^\s*\d+[.)]\s+(.*)$/))) {
        const kind = /^\s*\d/.test(raw) ? 'ol' : 'ul';
        if (list !== kind) { close(); out.push(`<${kind}>`); list = kind; }
        out.push(`<li>${inline(m[1])}</li>`);
      } else if (raw.trim() === '') {
        close();
        out.push('<br>');
      } else {
        close();
        out.push(inline(raw) + '<br>');
      }
    }
    close();
  });
  return out.join('');
}

// --- messages
function addMessage(role) {
  const div = document.createElement('div');
  div.className = 'msg ' + role;
  $('messages').append(div);
  return div;
}

function scrollDown() {
  const m = $('messages');
  m.scrollTop = m.scrollHeight;
}

/// An assistant bubble: reasoning, content, tool calls, the speed line.
function assistantView() {
  const div = addMessage('assistant');
  const reasoning = document.createElement('details');
  reasoning.className = 'reasoning';
  reasoning.open = true;
  reasoning.hidden = true;
  reasoning.innerHTML = '<summary>Reasoning</summary>';
  const thoughts = document.createElement('div');
  reasoning.append(thoughts);
  const content = document.createElement('div');
  content.className = 'content';
  const calls = document.createElement('div');
  const meta = document.createElement('div');
  meta.className = 'meta';
  div.append(reasoning, content, calls, meta);
  return { div, reasoning, thoughts, content, calls, meta };
}

function requestBody() {
  const body = {
    messages: [],
    stream: true,
    stream_options: { include_usage: true },
    temperature: Number($('temperature').value),
    top_p: Number($('top_p').value),
    max_tokens: Number($('max_tokens').value),
  };
  if (Number($('top_k').value) > 0) body.top_k = Number($('top_k').value);
  if ($('seed').value !== '') body.seed = Number($('seed').value);
  if ($('system').value.trim()) body.messages.push({ role: 'system', content: $('system').value });
  body.messages.push(...conversation);
  const extra = $('extra').value.trim();
  $('settings-error').hidden = true;
  if (extra) {
    try {
      Object.assign(body, JSON.parse(extra));
    } catch (e) {
      $('settings-error').textContent = 'Extra request fields: ' + e.message;
      $('settings-error').hidden = false;
      throw e;
    }
  }
  return body;
}

/// Reads the SSE stream into the view; returns what the reply said. The
/// view is redrawn at most every 50 ms, and once more when the stream ends
/// or is stopped: redrawing the whole reply's markdown for every token made
/// a long reply quadratic, and a fast stream kept the page too busy to
/// answer its Stop button.
async function stream(response, view) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '', reasoning = '', content = '', finish = '', usage = null, first = 0;
  const calls = [];
  let timer = 0;
  const draw = () => {
    timer = 0;
    if (reasoning) {
      view.reasoning.hidden = false;
      view.thoughts.textContent = reasoning;
    }
    view.content.innerHTML = markdown(content);
    if (calls.length)
      view.calls.innerHTML = calls.map((c) => `<div class="tool-call">→ ${escapeHtml(c.function.name)}(${escapeHtml(c.function.arguments)})</div>`).join('');
    scrollDown();
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data: ')) continue; // comments: keep-alives
          const data = line.slice(6);
          if (data === '[DONE]') continue;
          const chunk = JSON.parse(data);
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          const d = choice.delta ?? {};
          const r = d.reasoning_content ?? d.reasoning;
          if ((r || d.content || d.tool_calls) && !first) first = performance.now();
          if (r) reasoning += r;
          if (d.content) content += d.content;
          for (const c of d.tool_calls ?? []) {
            if (!calls[c.index]) calls[c.index] = { id: c.id, type: 'function', function: { name: c.function?.name ?? '', arguments: '' } };
            calls[c.index].function.arguments += c.function?.arguments ?? '';
          }
          if ((r || d.content || d.tool_calls) && !timer) timer = setTimeout(draw, 50);
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    draw();
  }
  return { reasoning, content, calls, finish, usage, first };
}

async function send(text) {
  conversation.push({ role: 'user', content: text });
  addMessage('user').textContent = text;
  const view = assistantView();
  scrollDown();
  controller = new AbortController();
  $('send').hidden = true;
  $('stop').hidden = false;
  const start = performance.now();
  let reply = { reasoning: '', content: '', calls: [], finish: '', usage: null, first: 0 };
  try {
    const response = await fetch('/v1/chat/completions', {
      method: 'POST', headers: headers(), body: JSON.stringify(requestBody()), signal: controller.signal,
    });
    if (!response.ok) {
      const err = await response.json().catch(() => ({}));
      throw new Error(err.error?.message ?? `HTTP ${response.status}`);
    }
    reply = await stream(response, view);
  } catch (e) {
    if (e.name === 'AbortError') {
      reply.finish = 'stopped';
    } else {
      const p = document.createElement('p');
      p.className = 'error';
      p.textContent = e.message;
      view.div.append(p);
      reply.finish = 'error';
    }
  } finally {
    controller = null;
    $('send').hidden = false;
    $('stop').hidden = true;
  }
  if (reply.finish === 'stopped') {
    // What streamed before the stop stays; read it off the view.
    reply.content = view.content.textContent;
  }
  view.reasoning.open = false;
  const seconds = (performance.now() - (reply.first || start)) / 1000;
  const tokens = reply.usage?.completion_tokens;
  const parts = [];
  if (tokens !== undefined) {
    parts.push(`${tokens} tokens`);
    if (seconds > 0 && tokens > 1) parts.push(`${(tokens / seconds).toFixed(1)} tok/s`);
  }
  if (reply.finish) parts.push(reply.finish);
  view.meta.textContent = parts.join(' · ');
  view.div.dataset.finish = reply.finish;
  const message = { role: 'assistant', content: reply.content };
  if (reply.calls.length) message.tool_calls = reply.calls;
  if (reply.reasoning) message.reasoning_content = reply.reasoning;
  conversation.push(message);
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('input').value.trim();
  if (!text || controller) return;
  $('input').value = '';
  send(text);
});
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});
$('stop').addEventListener('click', () => { if (controller) controller.abort(); });
