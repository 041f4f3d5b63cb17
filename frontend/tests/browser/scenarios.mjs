import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, apiLogin, axeViolations, newPage, screenshots, signIn, waitFor } from './harness.mjs';

/** Every page visit ends here: no serious axe violation, no console error, a screenshot. */
async function checkPage(page, name) {
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  const violations = await axeViolations(page);
  assert.deepEqual(violations, [], `${name}: serious accessibility violations`);
  assert.deepEqual(page.consoleErrors, [], `${name}: console errors`);
}

async function buyerOrdersWatchesReleasesAndIsBilled({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.waitForURL('**/leases');
  await page.getByTestId('lease-table').waitFor();
  await checkPage(page, 'leases');

  await page.goto(base + '/buy');
  await page.getByLabel('TFLOPS').fill('50');
  await page.getByLabel('GPU memory (GB)').fill('8');
  await page.getByLabel('Command').fill('echo hello-from-the-browser; i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done');
  await page.getByLabel('Tags').fill('team=browser');
  // The quote follows the form.
  await waitFor(async () => (await page.getByTestId('quote-price').textContent())?.includes('/ hour'), 'a quote');
  await page.getByTestId('quote-slice').waitFor();
  await checkPage(page, 'buy');
  await page.getByRole('button', { name: 'Place order' }).click();
  await page.waitForURL(/\/leases\/[0-9a-f-]{36}$/);
  const leaseId = page.url().split('/').pop();

  // running, with no reload: the event stream moves the badge.
  const navigations = [];
  page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));
  await page.getByTestId('lease-state').filter({ hasText: 'running' }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await page.getByTestId('logs').textContent().catch(() => ''))?.includes('hello-from-the-browser'), 'the logs', 30_000);
  assert.deepEqual(navigations, [], 'the page was not reloaded');
  await checkPage(page, 'lease-running');

  await page.getByRole('button', { name: 'Release' }).click();
  await page.getByRole('button', { name: 'Yes, release' }).click();
  await page.getByTestId('lease-state').filter({ hasText: 'ended' }).waitFor({ timeout: 30_000 });
  await checkPage(page, 'lease-ended');

  // The bill: usage reports arrive every 10 s and billing runs every 10 s.
  const token = await apiLogin(base, 'buyer');
  await waitFor(async () => {
    const lease = await apiCall(base, 'GET', `/v1/leases/${leaseId}`, token);
    return lease.body.usage && lease.body.usage.charged !== '0' && Number(lease.body.usage.charged) > 0;
  }, 'the lease to be charged', 60_000, 1000);
  await page.goto(base + '/billing');
  await page.getByTestId('billing-total').waitFor();
  await waitFor(async () => (await page.getByTestId('cost-by-tag').textContent())?.includes('browser'), 'the tag in the bill');
  await checkPage(page, 'billing');
  await page.context().close();
}

export const scenarios = [['a buyer orders from the form, watches it run, reads its logs, releases it and is billed', buyerOrdersWatchesReleasesAndIsBilled]];
