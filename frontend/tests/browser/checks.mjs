import assert from 'node:assert/strict';
import { join } from 'node:path';
import { axeViolations, cspViolations, screenshots } from './harness.mjs';

/** Every page visit ends here: no serious axe violation, no console error, a screenshot. */
export async function checkPage(page, name) {
  // Live pages keep a stream open, so the network is never idle for long: wait a little at most.
  await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined);
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  const violations = await axeViolations(page);
  assert.deepEqual(violations, [], `${name}: serious accessibility violations`);
  assert.deepEqual(page.consoleErrors, [], `${name}: console errors`);
  assert.deepEqual(await cspViolations(page), [], `${name}: Content-Security-Policy violations`);
}

/** Chromium logs each 4xx a test provokes on purpose; those are not the page's errors. */
export function withoutProvoked(page, statuses) {
  page.consoleErrors = page.consoleErrors.filter(
    (e) => !statuses.some((s) => e.includes(`Failed to load resource: the server responded with a status of ${s}`)),
  );
}
