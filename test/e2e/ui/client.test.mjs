// llmc serve's chat page (GET /) in headless Chromium: two turns stream
// into the page with the reasoning apart and the markdown rendered, the
// history goes back with the second request, Stop ends a reply that would
// run on, and the page's speed line shows. A random-weight model is steered
// by llmc's `grammar` field (the page's extra request fields). The
// screenshot goes to chat-page.png in the working directory.
// Usage: node client.test.mjs BASE_URL MODEL_NAME
import puppeteer from 'puppeteer-core';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

const [base] = process.argv.slice(2);
setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 240_000).unref();
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);
assert.ok(chromium, 'Debian\'s chromium is not installed (tools/bootstrap.sh installs it)');

const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
let failed = false;
let page;
try {
  page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 800 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const bodies = [];
  page.on('request', (r) => { if (r.url().endsWith('/v1/chat/completions')) bodies.push(JSON.parse(r.postData())); });
  await page.goto(`${base}/`, { waitUntil: 'networkidle0' });
  assert.equal(await page.title(), 'llmc chat');

  const setField = (id, value) => page.$eval(`#${id}`, (el, v) => { el.value = v; el.dispatchEvent(new Event('change')); }, value);
  // Polled on a timer: requestAnimationFrame (the default) is throttled in
  // a headless page on a loaded machine, and a poll can then miss a reply's
  // whole stream.
  const finished = (n) => page.waitForFunction((k) => document.querySelectorAll('.msg.assistant[data-finish]').length >= k, { timeout: 60_000, polling: 50 }, n);
  const say = async (text) => { await page.type('#input', text); await page.keyboard.press('Enter'); };

  await page.click('#toggle-settings');
  await setField('temperature', '0');
  await setField('extra', JSON.stringify({
    grammar: 'root ::= "<think>" "Planning a reply." "</think>" "\\n\\nHello **world**, turn " [0-9]',
  }));

  await say('hi');
  await finished(1);
  await say('again');
  await finished(2);
  const replies = await page.$$eval('.msg.assistant', (els) => els.map((el) => ({
    reasoningShown: !el.querySelector('details.reasoning').hidden,
    reasoning: el.querySelector('details.reasoning div').textContent,
    html: el.querySelector('.content').innerHTML,
    meta: el.querySelector('.meta').textContent,
  })));
  assert.equal(replies.length, 2);
  for (const r of replies) {
    assert.ok(r.reasoningShown, JSON.stringify(r));
    assert.equal(r.reasoning, 'Planning a reply.');
    assert.match(r.html, /^Hello <strong>world<\/strong>, turn [0-9]/);
    assert.doesNotMatch(r.html, /think/);
    assert.match(r.meta, /tokens · [0-9.]+ tok\/s · stop/);
  }
  assert.deepEqual(await page.$$eval('.msg.user', (els) => els.map((e) => e.textContent)), ['hi', 'again']);
  // The second request carried the first turn, reasoning apart.
  assert.deepEqual(bodies[1].messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.match(bodies[1].messages[1].content, /^Hello \*\*world\*\*/);
  assert.equal(bodies[1].messages[1].reasoning_content, 'Planning a reply.');
  assert.equal(bodies[1].stream, true);

  // Stop: a reply that would run to 30000 tokens ends when asked. (4000
  // tokens of this tiny model streamed whole, on a loaded machine, before
  // the page's check ran once.)
  await setField('extra', JSON.stringify({ ignore_eos: true }));
  await setField('max_tokens', '30000');
  await say('go on');
  // Stop is pressed in the same task that sees the reply streaming: a
  // click sent after the check lost the race on a loaded machine (the
  // button had been hidden again, or not laid out, by the time it came).
  await page.waitForFunction(() => {
    const last = [...document.querySelectorAll('.msg.assistant')].at(-1);
    const stop = document.getElementById('stop');
    if (!last || last.dataset.finish || stop.hidden ||
        last.querySelector('.content').textContent.length <= 20)
      return false;
    stop.click();
    return true;
  }, { timeout: 60_000, polling: 20 });
  await finished(3);
  const stopped = () => page.$$eval('.msg.assistant', (els) => ({ finish: els.at(-1).dataset.finish, text: els.at(-1).querySelector('.content').textContent }));
  const atStop = await stopped();
  assert.equal(atStop.finish, 'stopped');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await stopped()).text, atStop.text, 'text kept arriving after Stop');
  assert.equal(await page.$eval('#send', (b) => b.hidden), false);

  await page.screenshot({ path: 'chat-page.png', fullPage: true });
  console.log(`screenshot: ${process.cwd()}/chat-page.png`);
  assert.deepEqual(errors, []);
  console.log('ok   the chat page: two streamed turns, reasoning apart, markdown, history, stop');
} catch (e) {
  failed = true;
  console.log(`FAIL the chat page\n     ${e.stack ?? e}`);
  // What the page showed, so a failure on a loaded machine says which wait.
  if (page) {
    const state = await page.$$eval('.msg', (els) => els.map((m) => `${m.className} finish=${m.dataset.finish ?? '-'} chars=${m.textContent.length}`)).catch(() => []);
    const stopHidden = await page.$eval('#stop', (b) => b.hidden).catch(() => '?');
    console.log(`     page: ${state.join(' | ')}; stop hidden: ${stopHidden}`);
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
