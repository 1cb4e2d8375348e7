// k6/browser's error words: an action's timeout, a second browser
// context, waitForSelector's timeout. The page stays on about:blank, so
// that no web vital (whose rating depends on the machine's load) is
// compared.
// compat:env K6_BROWSER_EXECUTABLE_PATH=/usr/bin/chromium K6_BROWSER_ARGS=no-sandbox
import { browser } from 'k6/browser';
import { check } from 'k6';

export const options = {
  scenarios: { ui: { executor: 'shared-iterations', iterations: 1, options: { browser: { type: 'chromium' } } } },
};

async function message(f) {
  try {
    await f();
    return 'no error';
  } catch (e) {
    return String(e);
  }
}

export default async function () {
  const page = await browser.newPage();
  try {
    await page.evaluate(() => { document.body.innerHTML = '<button id="b">B</button>'; });
    check(await page.locator('#b').textContent(), { 'content set': (t) => t === 'B' });
    check(await message(() => page.locator('#nope').click({ timeout: 300 })), {
      'click timeout': (m) => m === 'clicking on "#nope": timed out after 300ms',
    });
    check(await message(() => page.waitForSelector('#nope', { timeout: 300 })), {
      'waitForSelector timeout': (m) => m === 'waiting for selector "#nope": timed out after 300ms',
    });
    check(await message(() => browser.newPage()), {
      'second context': (m) => m === 'new page: existing browser context must be closed before creating a new one',
    });
    check(browser.isConnected(), { 'connected': (c) => c === true });
    check(browser.context() !== null, { 'has context': (c) => c });
  } finally {
    await page.close();
  }
}
