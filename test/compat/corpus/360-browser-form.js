// k6/browser on Chromium: a page filled in, a button clicked, its text
// read, a link followed; the browser_* metrics, web vitals and checks.
// compat:env K6_BROWSER_EXECUTABLE_PATH=/usr/bin/chromium K6_BROWSER_ARGS=no-sandbox
import { browser } from 'k6/browser';
import { check } from 'k6';

export const options = {
  scenarios: { ui: { executor: 'shared-iterations', iterations: 1, options: { browser: { type: 'chromium' } } } },
};

export default async function () {
  const page = await browser.newPage();
  try {
    const res = await page.goto(__ENV.BASE + '/page');
    check(res, { 'status 200': (r) => r.status() === 200 });
    await page.locator('#name').fill('Ada');
    await page.getByRole('button', { name: 'Greet' }).click();
    check(await page.locator('#h').textContent(), { 'greeted': (t) => t === 'Hi Ada' });
    check(await page.title(), { 'title': (t) => t === 'Corpus page' });
    await page.getByRole('checkbox').check();
    check(await page.locator('#agree').isChecked(), { 'checked': (c) => c === true });
    const li = page.locator('li');
    check(await li.count(), { 'three items': (n) => n === 3 });
    check(await li.last().textContent(), { 'last item': (t) => t === 'three' });
    await Promise.all([page.waitForNavigation(), page.locator('a').click()]);
    check(page.url(), { 'navigated': (u) => u.endsWith('/page2') });
  } finally {
    await page.close();
  }
}
