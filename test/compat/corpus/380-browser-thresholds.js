// k6/browser metrics in thresholds: one on browser_web_vital_fcp that any
// page crosses fails the run (exit 99), the ones on
// browser_http_req_duration and browser_http_req_failed hold. The page
// stays a second: k6 loses the vitals and the favicon request of a page
// closed as soon as it loaded in some runs.
// compat:env K6_BROWSER_EXECUTABLE_PATH=/usr/bin/chromium K6_BROWSER_ARGS=no-sandbox
import { browser } from 'k6/browser';

export const options = {
  thresholds: {
    browser_http_req_duration: ['p(95)<60000'],
    browser_http_req_failed: ['rate<0.9'],
    browser_web_vital_fcp: ['max<0'],
  },
  scenarios: { ui: { executor: 'shared-iterations', iterations: 1, options: { browser: { type: 'chromium' } } } },
};

export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(__ENV.BASE + '/page');
    await page.waitForTimeout(1000);
  } finally {
    await page.close();
  }
}
