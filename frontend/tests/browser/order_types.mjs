// Order types through the buy form (ARCHITECTURE.md §22): several units
// placed together, each its own lease, listed on every lease of the order
// with its fills' order type; a fill-or-kill of more units than fit is
// refused whole; a field the server refuses is named beside its input.
import assert from 'node:assert/strict';
import { apiCall, apiLogin, newPage, signIn, waitFor } from './harness.mjs';
import { checkPage, withoutProvoked } from './checks.mjs';

const H100 = 'H100-SXM5-80GB';
// A whole H100's worth: only the demo's H100 node in eu-west holds it, one unit a GPU.
const WHOLE_H100 = { tflops: 900, vram_gb: 80, gpu_model: H100 };

/** The buy form filled for whole H100s in eu-west, `count` of them. */
async function fillWholeH100s(page, base, count) {
  await page.goto(base + '/buy');
  await page.getByRole('textbox', { name: 'Region' }).click();
  await page.getByRole('option', { name: 'eu-west', exact: true }).click();
  await page.getByRole('textbox', { name: 'GPU model' }).click();
  await page.getByRole('option', { name: H100, exact: true }).click();
  await page.getByLabel('TFLOPS').fill(String(WHOLE_H100.tflops));
  await page.getByLabel('GPU memory (GB)').fill(String(WHOLE_H100.vram_gb));
  await page.getByLabel('Command').fill('sleep 600');
  await page.getByLabel('Units', { exact: true }).fill(String(count));
}

async function chooseTimeInForce(page, label) {
  await page.getByRole('textbox', { name: 'Time in force' }).click();
  await page.getByRole('option', { name: label, exact: true }).click();
}

/** How many whole H100s free capacity holds now, as the quote says. */
async function freeH100s(base, token) {
  const q = await apiCall(base, 'POST', '/v1/quotes', token, { mode: 'on_demand', region: 'eu-west', resources: WHOLE_H100, count: 64 });
  assert.equal(q.status, 200, JSON.stringify(q.body));
  return q.body.units.placeable_now;
}

export async function aBuyerPlacesUnitsTogetherAndAFillOrKillIsRefusedWhole({ browser, base }) {
  const token = await apiLogin(base, 'buyer');
  const free = await freeH100s(base, token);
  assert.ok(free >= 2 && free < 64, `room for two whole H100s, not for 64 (${free} free)`);
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');

  // Two units, all or none: the quote says both fit and what they cost together.
  await fillWholeH100s(page, base, 2);
  await page.getByLabel('All or none').check();
  const fit = page.getByTestId('quote-count');
  await waitFor(async () => /^2 of 2 units fit now, \$[\d,.]+\/h together\.$/.test((await fit.textContent().catch(() => '')) ?? ''), 'the quote of two units');
  await checkPage(page, 'buy-order-type');
  await page.getByRole('button', { name: 'Place order' }).click();
  await page.waitForURL(/\/leases\/[0-9a-f-]{36}$/);
  const first = page.url().split('/').pop();

  // The order shows both its leases, this one first, each a link.
  const units = page.getByTestId('order-leases');
  await units.waitFor();
  assert.match(await units.textContent(), /^Unit 1 of 2/);
  const links = units.getByRole('link');
  assert.equal(await links.count(), 2);
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.equal(hrefs[0], `/leases/${first}`);
  const lease = await apiCall(base, 'GET', `/v1/leases/${first}`, token);
  const order = await apiCall(base, 'GET', `/v1/orders/${lease.body.order_id}`, token);
  assert.deepEqual(order.body.lease_ids.map((id) => `/leases/${id}`), hrefs);
  assert.equal(order.body.request.count, 2);
  assert.equal(order.body.request.all_or_none, true);
  assert.equal(order.body.request.max_wait_s ?? null, null, "no max wait beside the order type");
  // Each fill reports the order's type.
  const fills = page.getByTestId('fills').locator('tbody tr');
  await waitFor(async () => (await fills.count()) === 2, 'both fills');
  assert.deepEqual(await page.getByTestId('fill-order-type').allTextContents(), ['ioc · 2 units (min 2)', 'ioc · 2 units (min 2)']);
  await checkPage(page, 'lease-order-units');
  // The other unit's page says which it is.
  await links.nth(1).click();
  await page.waitForURL(`**${hrefs[1]}`);
  await page.getByTestId('order-leases').filter({ hasText: /^Unit 2 of 2/ }).waitFor();

  // Fill or kill of one more than fits: refused whole, nothing placed.
  const left = await freeH100s(base, token);
  assert.equal(left, free - 2);
  await fillWholeH100s(page, base, left + 1);
  await chooseTimeInForce(page, 'Fill or kill');
  assert.equal(await page.getByLabel('At least').isDisabled(), true, 'fill or kill takes every unit');
  await waitFor(async () => (await fit.textContent().catch(() => ''))?.startsWith(`${left} of ${left + 1} units fit now`), 'the quote of one unit too many');
  await page.getByRole('button', { name: 'Place order' }).click();
  const refused = page.getByTestId('order-error');
  await refused.waitFor();
  assert.match(await refused.textContent(), /Order refused.*no adequate capacity is free/);
  assert.match(page.url(), /\/buy$/);
  assert.equal(await freeH100s(base, token), left, 'nothing was held');
  withoutProvoked(page, [422]);
  await checkPage(page, 'buy-fok-refused');

  // Good till time past the 7 days: the server names expires_at, shown under it.
  await chooseTimeInForce(page, 'Good till time');
  const expires = page.getByLabel('Expires at');
  const late = new Date(Date.now() + 10 * 86400_000);
  const pad = (n) => String(n).padStart(2, '0');
  await expires.fill(`${late.getFullYear()}-${pad(late.getMonth() + 1)}-${pad(late.getDate())}T${pad(late.getHours())}:${pad(late.getMinutes())}`);
  await page.getByRole('button', { name: 'Place order' }).click();
  await waitFor(async () => (await expires.getAttribute('aria-invalid')) === 'true', 'the refusal beside Expires at');
  assert.match(await page.getByTestId('order-type').textContent(), /must be in the future, within 7 days/);
  withoutProvoked(page, [422]);
  await checkPage(page, 'buy-gtt-field-error');
  await page.context().close();

  for (const id of order.body.lease_ids) {
    const r = await apiCall(base, 'POST', `/v1/leases/${id}/release`, token, {});
    assert.ok(r.status < 300, JSON.stringify(r.body));
  }
}
