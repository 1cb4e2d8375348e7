// k6/browser used in a scenario without options.browser.type: k6's
// sentence, and the iteration goes on.
import { browser } from 'k6/browser';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  let msg = 'no error';
  try {
    await browser.newPage();
  } catch (e) {
    msg = String(e);
  }
  check(msg, {
    'registry sentence': (m) => m === 'browser not found in registry. make sure to set browser type option in scenario definition in order to use the browser module',
  });
}
