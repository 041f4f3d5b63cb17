import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, apiLogin, cspViolations, newPage, screenshots, signIn, waitFor } from './harness.mjs';
import { aBuyerImportsASlurmHistoryAndPricesIt, aBuyerReadsItsCapacityProfileAndPricesItsTco } from './capacity.mjs';
import { aBuyerPlacesUnitsTogetherAndAFillOrKillIsRefusedWhole } from './order_types.mjs';
import { aBuyerTriesACommandOnTwoMigShapesAndReadsTheSmallestThatPassed } from './trials.mjs';
import { checkPage, withoutProvoked } from './checks.mjs';


/** The dashboard and the API docs work under the server's strict policies:
 * not one violation (the `data:` icon, Mantine's nonce'd `<style>` elements,
 * Swagger UI's scripts), and the theme's own styles applied. */
async function theDashboardAndTheDocsRunUnderTheirContentSecurityPolicy({ browser, base }) {
  const page = await newPage(browser);
  const answer = await page.goto(base + '/signin');
  const csp = answer.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self';/);
  assert.match(csp, /style-src 'self' 'nonce-[0-9a-f]{32}';/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(answer.headers()['x-frame-options'], 'DENY');
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  // The page's icon is a `data:` URL: allowed, and loaded.
  assert.equal(await page.evaluate(() => document.querySelector('link[rel=icon]').href), 'data:,');
  // Mantine's theme variables arrive in a `<style>` that needs the nonce:
  // the filled blue is the theme's shade 8, not the stylesheet's default 6.
  const shade = await page.evaluate(() =>
    getComputedStyle(document.documentElement).getPropertyValue('--mantine-color-blue-filled').trim(),
  );
  assert.equal(shade, '#1971c2', 'blue 8 (blue 6, #228be6, would mean the theme was refused)');
  await checkPage(page, 'csp-signin');
  await signIn(page, base, 'buyer');
  await page.waitForURL('**/leases');
  await page.getByTestId('lease-table').waitFor();
  await checkPage(page, 'csp-leases');

  const docs = await page.goto(base + '/docs/');
  assert.match(docs.headers()['content-security-policy'], /frame-ancestors 'none'/);
  await page.locator('.swagger-ui .info .title').waitFor();
  await page.locator('.opblock').first().waitFor();
  await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined);
  assert.deepEqual(page.consoleErrors, [], 'docs: console errors');
  assert.deepEqual(await cspViolations(page), [], 'docs: Content-Security-Policy violations');
  await page.context().close();
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
  await page.getByLabel('Command').fill('echo hello-from-the-browser; echo 42 > "$GPUEX_OUTPUTS/result.txt"; i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done');
  await page.getByLabel('Checkpoint every (s)').fill('30');
  await page.getByLabel('Resume from the last checkpoint if interrupted').check();
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
  // What it left in /outputs arrives with the agent's last upload.
  await waitFor(async () => {
    if ((await page.getByTestId('outputs').textContent().catch(() => ''))?.includes('result.txt')) return true;
    await page.reload();
    return false;
  }, 'the outputs', 30_000, 2000);
  await checkPage(page, 'lease-ended');
  const [output] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download result.txt' }).click()]);
  assert.equal(output.suggestedFilename(), 'result.txt');
  assert.equal(Buffer.concat(await (await output.createReadStream()).toArray()).toString('utf8'), '42\n');

  // The bill: usage reports arrive every 10 s and billing runs every 10 s.
  const token = await apiLogin(base, 'buyer');
  // The order carries the form's checkpoint and what to do when interrupted.
  const placed = await apiCall(base, 'GET', `/v1/leases/${leaseId}`, token);
  const order = await apiCall(base, 'GET', `/v1/orders/${placed.body.order_id}`, token);
  assert.deepEqual(order.body.request.checkpoint, { every_s: 30 });
  assert.equal(order.body.request.on_interrupt, 'resume');
  assert.deepEqual(order.body.attempts, [leaseId]);

  // A private image's credentials go with the order once and come back nowhere.
  await page.goto(base + '/buy');
  await page.getByLabel('TFLOPS').fill('20');
  await page.getByLabel('GPU memory (GB)').fill('4');
  await page.getByLabel('Command').fill('echo private-image');
  await page.getByLabel('Image').fill('localhost/private/model:1');
  await page.getByLabel('Registry user').fill('browser-ci');
  await page.getByLabel('Registry password').fill('browser-registry-s3cret');
  await checkPage(page, 'buy-private-image');
  await page.getByRole('button', { name: 'Place order' }).click();
  await page.waitForURL(/\/leases\/[0-9a-f-]{36}$/);
  const privateLease = await apiCall(base, 'GET', `/v1/leases/${page.url().split('/').pop()}`, token);
  const privateOrder = await apiCall(base, 'GET', `/v1/orders/${privateLease.body.order_id}`, token);
  assert.equal(privateOrder.body.request.image, 'localhost/private/model:1');
  assert.ok(!JSON.stringify(privateOrder.body).includes('browser-registry-s3cret'), 'the password is shown');
  assert.equal(privateOrder.body.request.registry_auth, undefined);
  await waitFor(async () => {
    const lease = await apiCall(base, 'GET', `/v1/leases/${leaseId}`, token);
    return lease.body.usage && lease.body.usage.charged !== '0' && Number(lease.body.usage.charged) > 0;
  }, 'the lease to be charged', 60_000, 1000);
  await page.goto(base + '/billing');
  await page.getByTestId('billing-total').waitFor();
  await waitFor(async () => (await page.getByTestId('cost-by-tag').textContent())?.includes('browser'), 'the tag in the bill');

  // A budget on the tag shows its progress.
  await page.getByLabel('Tag value').fill('browser');
  await page.getByLabel('Monthly limit').fill('1');
  await page.getByRole('button', { name: 'Set budget' }).click();
  await page.getByRole('progressbar', { name: /^Budget team=browser: [\d.]+ % used$/ }).waitFor({ state: 'attached' });

  // The FOCUS export downloads; the printable invoice opens in a tab.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /Download FOCUS CSV/ }).click()]);
  const csv = await (await download.createReadStream()).toArray();
  assert.match(Buffer.concat(csv).toString('utf8').split('\n')[0], /BilledCost/);
  const [invoice] = await Promise.all([page.waitForEvent('popup'), page.getByRole('button', { name: /^Open / }).first().click()]);
  await invoice.waitForLoadState();
  await waitFor(async () => (await invoice.content().catch(() => '')).includes('GPUEX-'), 'the printable invoice');
  await invoice.close();
  await checkPage(page, 'billing');
  await page.context().close();
}

async function aProviderSeesTheBuyersLeaseOnItsMigSlot({ browser, base }) {
  const buyer = await apiLogin(base, 'buyer');
  const order = await apiCall(base, 'POST', '/v1/orders', buyer, {
    mode: 'on_demand',
    region: 'eu-west',
    resources: { tflops: 50, vram_gb: 8, gpu_model: 'H100-SXM5-80GB', isolation: 'mig' },
    command: 'sleep 600',
  });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const lease = await apiCall(base, 'GET', `/v1/leases/${order.body.lease_id}`, buyer);
  const [gpu] = lease.body.placement.gpus;
  assert.equal(gpu.slot.kind, 'mig');

  const page = await newPage(browser);
  await signIn(page, base, 'provider');
  await page.waitForURL('**/provider');
  await page.getByTestId('node-table').waitFor();
  await checkPage(page, 'provider');
  await page.getByRole('link', { name: 'h100-mig' }).click();
  // The lease's slot is drawn at its GPU and first memory slice.
  const slot = page.locator(`.slot[data-gpu="${gpu.index}"][data-start="${gpu.slot.start}"]`);
  await slot.waitFor();
  assert.equal(await slot.getAttribute('data-lease'), order.body.lease_id);
  assert.equal(await slot.getAttribute('data-held'), 'true');
  await checkPage(page, 'provider-node');
  await apiCall(base, 'POST', `/v1/leases/${order.body.lease_id}/release`, buyer);
  await page.context().close();
}

async function aSpotLeasesPreemptionNoticeCountsDownLive({ browser, base }) {
  const buyer = await apiLogin(base, 'buyer');
  const V100 = 'V100-SXM2-32GB';
  const spot = await apiCall(base, 'POST', '/v1/orders', buyer, {
    mode: 'spot',
    region: 'us-east',
    max_price: '5.00',
    resources: { tflops: 100, vram_gb: 16, gpu_model: V100, isolation: 'whole', gpus: 2 },
    command: 'trap "echo got SIGTERM" TERM; while true; do sleep 1; done',
  });
  assert.equal(spot.status, 201, JSON.stringify(spot.body));
  // A spot bid fills at the next auction (every 10 s).
  const leaseId = await waitFor(async () => {
    const o = await apiCall(base, 'GET', `/v1/orders/${spot.body.id}`, buyer);
    return o.body.lease_id;
  }, 'the spot bid to fill', 40_000, 1000);

  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(`${base}/leases/${leaseId}`);
  await page.getByTestId('lease-state').filter({ hasText: 'running' }).waitFor({ timeout: 30_000 });

  // On-demand capacity outranks spot: taking a V100 gives the spot lease notice.
  const onDemand = await apiCall(base, 'POST', '/v1/orders', buyer, {
    mode: 'on_demand',
    region: 'us-east',
    max_wait_s: 600,
    resources: { tflops: 50, vram_gb: 8, gpu_model: V100, isolation: 'whole' },
    command: 'sleep 600',
  });
  assert.ok(onDemand.status < 300, JSON.stringify(onDemand.body));
  await page.getByTestId('preempt-notice').waitFor({ timeout: 30_000 });
  const first = await page.getByTestId('countdown').textContent();
  assert.match(first, /ends in \d/);
  await page.waitForTimeout(2100);
  const later = await page.getByTestId('countdown').textContent();
  assert.notEqual(later, first, 'the countdown moves');
  await checkPage(page, 'lease-preempting');
  if (onDemand.body.lease_id) await apiCall(base, 'POST', `/v1/leases/${onDemand.body.lease_id}/release`, buyer);
  await page.context().close();
}

async function theMarketIsPublicAndLive({ browser, base }) {
  const page = await newPage(browser);
  await page.goto(base + '/signin');
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  await checkPage(page, 'signin');
  await page.goto(base + '/market');
  await page.getByTestId('prices').waitFor();
  await page.getByTestId('book').waitFor();
  // An auction runs every 10 s and its clearing arrives on the stream.
  await waitFor(async () => (await page.getByTestId('market-live').textContent())?.startsWith('Live:'), 'a market stream event', 30_000);
  await page.getByTestId('spot-price').waitFor({ timeout: 30_000 });
  // The demo lists the tail of a reservation: the offer is on the market.
  await page.getByTestId('resale-offers').locator('tbody tr').first().waitFor();
  await checkPage(page, 'market');
  await page.context().close();
}

async function anAdminSetsPricesAndCreditsWithErrorsBesideTheField({ browser, base }) {
  const buyer = await apiLogin(base, 'buyer');
  const me = await apiCall(base, 'GET', '/v1/me', buyer);
  // The demo's admin actions fill about one page of the audit log (20); a
  // region saved again unchanged makes sure there is an older page.
  const admin = await apiLogin(base, 'admin');
  for (let i = 0; i < 3; i++) {
    const r = await apiCall(base, 'PUT', '/v1/admin/regions/eu-west', admin, { timezone: 'Europe/Amsterdam' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const page = await newPage(browser);
  await signIn(page, base, 'admin');
  await page.waitForURL('**/admin');
  await page.getByTestId('admin-prices').waitFor();
  const credit = page.getByRole('form', { name: 'Credit a user' });
  await credit.getByLabel('User id').fill(me.body.id);
  await credit.getByLabel('Amount').fill('12.5x');
  await credit.getByRole('button', { name: 'Credit' }).click();
  // The problem's errors[].field lands under its input.
  const amount = credit.getByLabel('Amount');
  await waitFor(async () => (await amount.getAttribute('aria-invalid')) === 'true', 'the amount to be marked invalid');
  withoutProvoked(page, [422]);
  await checkPage(page, 'admin-field-error');
  await amount.fill('12.50');
  await credit.getByRole('button', { name: 'Credit' }).click();
  await page.getByTestId('credit-done').waitFor();
  assert.match(await page.getByTestId('credit-done').textContent(), /Credited \$12\.50/);

  // The audit log: the demo's own admin actions (it seeds list prices), and the
  // credit just made, which the log reads again after the change.
  const audit = page.getByTestId('audit-table');
  const rows = audit.locator('tbody tr');
  await rows.filter({ hasText: 'Set list price' }).first().waitFor();
  await rows.filter({ hasText: 'Credit' }).filter({ hasText: '$12.50' }).first().waitFor();
  assert.match(await rows.filter({ hasText: '$12.50' }).first().textContent(), /admin@gpuex\.demo/);
  await checkPage(page, 'admin');

  // Paging: "Older" appends the next page, until there is none.
  const all = await apiCall(base, 'GET', '/v1/admin/audit?limit=500', admin);
  assert.equal(all.status, 200, JSON.stringify(all.body));
  const total = all.body.items.length;
  const shown = await rows.count();
  assert.ok(total > shown, `an older page exists (${total} entries, ${shown} shown)`);
  while ((await rows.count()) < total) {
    const before = await rows.count();
    await page.getByRole('button', { name: 'Older' }).click();
    await waitFor(async () => (await rows.count()) > before, 'the older page to be appended');
  }
  assert.equal(await rows.count(), total);
  assert.equal(await page.getByRole('button', { name: 'Older' }).count(), 0, 'no Older button on the last page');
  // Newest first: the credit just made heads the list.
  assert.match(await rows.first().textContent(), /Credit.*\$12\.50/);

  // The filter: only credits, the one just made among them.
  await page.getByRole('textbox', { name: 'Filter by action' }).click();
  await page.getByRole('option', { name: 'Credit', exact: true }).click();
  await waitFor(async () => {
    const texts = await rows.allTextContents();
    return texts.length > 0 && texts.every((t) => t.includes('Credit') && !t.includes('Set list price'));
  }, 'the log to show only credits');
  await rows.filter({ hasText: '$12.50' }).first().waitFor();
  await checkPage(page, 'admin-audit-credits');
  await page.context().close();
}

async function aBuyersFormShowsTheProblemBesideItsField({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(base + '/buy');
  await page.getByLabel('GPU memory (GB)').fill('6');
  const vram = page.getByLabel('GPU memory (GB)');
  await waitFor(async () => (await vram.getAttribute('aria-invalid')) === 'true', 'the VRAM field to show the quote’s problem');
  withoutProvoked(page, [422]);
  await checkPage(page, 'buy-field-error');
  await page.context().close();
}

async function aSessionThatStopsWorkingGoesBackToSignIn({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.waitForURL('**/leases');
  // As if the token expired or was revoked: the next call answers 401.
  await page.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('gpuex.session'));
    s.token = 'expired-token';
    sessionStorage.setItem('gpuex.session', JSON.stringify(s));
  });
  await page.goto(base + '/billing');
  await page.getByTestId('session-notice').waitFor();
  assert.match(page.url(), /\/signin\?next=%2Fbilling/);
  assert.match(await page.getByTestId('session-notice').textContent(), /sign in again/);
  await page.screenshot({ path: join(screenshots, 'session-ended.png') });
  // Signing in again returns to the page that was asked for.
  await page.getByLabel('Email').fill('buyer@gpuex.demo');
  await page.locator('input[type=password]').fill('demo-buyer-password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL('**/billing');
  await page.context().close();
}

async function aReservedLeaseShowsItsResaleAskCap({ browser, base }) {
  const buyer = await apiLogin(base, 'buyer');
  const leases = await apiCall(base, 'GET', '/v1/leases?limit=100', buyer);
  const reserved = leases.body.items.find(
    (l) => l.mode === 'reserved' && Date.parse(l.ends_at) - Date.parse(l.starts_at) >= 4 * 3600_000,
  );
  assert.ok(reserved, 'the demo has a four-hour reservation');
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(`${base}/leases/${reserved.id}`);
  const cap = page.getByTestId('ask-cap');
  await cap.waitFor();
  // 0.9 × the reserved price per hour, computed as decimals.
  assert.match(await cap.textContent(), /^At most \$\d+\.\d+ \(0\.9 × \$\d+\.\d+\)$/);
  await checkPage(page, 'lease-reserved');
  await page.context().close();
}

/** Listing a reservation's tail from its page: the facts then say when the
 * lease gives its slice up (`vacate_at`), while `Ends` keeps the owed window. */
async function aListedLeaseShowsWhenItVacates({ browser, base }) {
  const buyer = await apiLogin(base, 'buyer');
  const start = new Date((Math.floor(Date.now() / 3600_000) + 3) * 3600_000).toISOString();
  const order = await apiCall(base, 'POST', '/v1/orders', buyer, {
    mode: 'reserved',
    region: 'eu-west',
    start_at: start,
    duration_s: 3 * 3600,
    resources: { tflops: 50, vram_gb: 8 },
  });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(`${base}/leases/${order.body.lease_id}`);
  await page.getByTestId('ask-cap').waitFor();
  assert.equal(await page.getByTestId('fact-Vacates').count(), 0, 'not listed yet');
  // The form's first hour is the window's start.
  await page.getByLabel('Ask per hour').fill('0.01');
  await page.getByRole('button', { name: 'List', exact: true }).click();
  const vacates = page.getByTestId('fact-Vacates');
  await vacates.waitFor();
  const starts = await page.getByTestId('fact-Starts').textContent();
  assert.equal(await vacates.textContent(), `${starts} (listed for resale)`);
  const lease = await apiCall(base, 'GET', `/v1/leases/${order.body.lease_id}`, buyer);
  assert.equal(Date.parse(lease.body.vacate_at), Date.parse(start));
  assert.equal(Date.parse(lease.body.ends_at), Date.parse(start) + 3 * 3600_000);
  await checkPage(page, 'lease-listed');
  await page.context().close();
  // The listing is this buyer's own, which its quotes never offer it: cancel
  // it so the demo's market lists only the offer the next scenario buys.
  const mine = await apiCall(base, 'GET', '/v1/resale-listings', buyer);
  const listings = Array.isArray(mine.body) ? mine.body : (mine.body.items ?? []);
  for (const listing of listings.filter((l) => l.lease_id === order.body.lease_id && l.state === 'open')) {
    const cancelled = await apiCall(base, 'DELETE', `/v1/resale-listings/${listing.id}`, buyer);
    assert.ok(cancelled.status < 300, JSON.stringify(cancelled.body));
  }
  const left = await apiCall(base, 'GET', '/v1/resale-listings', buyer);
  const open = (Array.isArray(left.body) ? left.body : (left.body.items ?? [])).filter((l) => l.lease_id === order.body.lease_id && l.state === 'open');
  assert.equal(open.length, 0, 'the listing was cancelled');
}

async function theBuyFormQuotesACheaperResaleOffer({ browser, base }) {
  const offers = await apiCall(base, 'GET', '/v1/market/resale', null);
  const offer = offers.body[0];
  assert.ok(offer, 'the demo lists a resale offer');
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(base + '/buy');
  await page.getByText('Reserved', { exact: true }).click();
  await page.getByRole('textbox', { name: 'Region' }).click();
  await page.getByRole('option', { name: offer.region, exact: true }).click();
  // The start hour list shows local times: pick the offer's start by its label.
  const label = await page.evaluate(
    (iso) => new Date(iso).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short' }),
    offer.from,
  );
  await page.getByRole('textbox', { name: 'Starts' }).click();
  await page.getByRole('option', { name: label, exact: true }).click();
  await page.getByLabel('Hours').fill('1');
  await page.getByLabel('TFLOPS').fill(offer.tflops_h);
  await page.getByLabel('GPU memory (GB)').fill(String(Number(offer.vram_h) * 4));
  const resale = page.getByTestId('quote-resale');
  await resale.waitFor({ timeout: 15_000 });
  assert.match(await resale.textContent(), /A resale listing is cheaper: primary \$[\d.]+\/h, you save \$[\d.]+\/h/);
  await checkPage(page, 'buy-resale-quote');
  await page.context().close();
}

async function aBuyerReadsTheWalletAndMakesAnApiKeyShownOnce({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(base + '/account');
  await page.getByTestId('wallet-available').waitFor();
  await page.getByLabel('Key name').fill('browser-ci');
  await page.getByRole('button', { name: 'Create key' }).click();
  const created = page.getByTestId('api-key-created');
  await created.waitFor();
  const key = (await created.locator('pre').textContent()).trim();
  // The key works as a bearer token.
  const me = await apiCall(base, 'GET', '/v1/me', key);
  assert.equal(me.status, 200, JSON.stringify(me.body));
  await checkPage(page, 'account');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Revoke browser-ci' }).click();
  await page.getByRole('button', { name: 'Revoke browser-ci' }).waitFor({ state: 'detached' });
  assert.equal((await apiCall(base, 'GET', '/v1/me', key)).status, 401);
  await page.context().close();
}

async function aSessionRefreshesItselfAndSigningOutEndsItOnTheServer({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.waitForURL('**/leases');
  const before = await page.evaluate(() => JSON.parse(sessionStorage.getItem('gpuex.session')));
  assert.match(before.refreshToken, /^gpr_/);
  // As if the tab slept past the access token's expiry: the page refreshes
  // the pair before its first call and carries on, never asking to sign in.
  await page.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('gpuex.session'));
    s.token = 'expired-token';
    s.expiresAt = new Date(Date.now() - 1000).toISOString();
    sessionStorage.setItem('gpuex.session', JSON.stringify(s));
  });
  await page.goto(base + '/billing');
  await page.getByTestId('billing-total').waitFor();
  assert.match(page.url(), /\/billing$/);
  const after = await page.evaluate(() => JSON.parse(sessionStorage.getItem('gpuex.session')));
  assert.notEqual(after.refreshToken, before.refreshToken);
  assert.notEqual(after.token, 'expired-token');
  assert.ok(Date.parse(after.expiresAt) > Date.now(), after.expiresAt);
  // The new pair works; signing out ends it on the server, not only in the tab.
  assert.equal((await apiCall(base, 'GET', '/v1/me', after.token)).status, 200);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByTestId('session-notice').waitFor();
  await waitFor(async () => (await apiCall(base, 'GET', '/v1/me', after.token)).status === 401, 'the session to be revoked');
  const refreshed = await apiCall(base, 'POST', '/v1/auth/refresh', null, { refresh_token: after.refreshToken });
  assert.equal(refreshed.status, 401);
  await page.context().close();
}

async function aProviderDeletesANodeAndAnAdminChangesARole({ browser, base }) {
  const provider = await apiLogin(base, 'provider');
  const name = `doomed-${Date.now()}`;
  const created = await apiCall(base, 'POST', '/v1/nodes', provider, { name, region: 'eu-west' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const page = await newPage(browser);
  await signIn(page, base, 'provider');
  await page.goto(base + '/provider');
  await page.getByRole('button', { name: `Delete ${name}` }).click();
  await page.getByRole('button', { name: `Yes, delete ${name}` }).click();
  await page.getByRole('button', { name: `Delete ${name}` }).waitFor({ state: 'detached' });
  const beat = await apiCall(base, 'POST', '/v1/agent/heartbeat', created.body.token, {
    agent_id: created.body.id, sent_at: new Date().toISOString(), gpus: [], leases: [],
  });
  assert.equal(beat.status, 401, 'the deleted node\'s token is revoked');
  await checkPage(page, 'provider-node-deleted');
  await page.context().close();

  // An admin makes a fresh account a provider; a bad id is named beside its field.
  const email = `role-${Date.now()}@example.com`;
  const account = await apiCall(base, 'POST', '/v1/auth/register', null, { email, password: 'correct horse battery', name: 'Role', role: 'buyer' });
  assert.equal(account.status, 201, JSON.stringify(account.body));
  const admin = await newPage(browser);
  await signIn(admin, base, 'admin');
  await admin.goto(base + '/admin');
  const form = admin.getByRole('form', { name: 'Change a role' });
  await form.getByLabel('Account id').fill('not-an-id');
  await form.getByRole('button', { name: 'Change role' }).click();
  // A malformed id names no account, as an unknown one: 404, shown beside the field.
  await waitFor(async () => (await form.getByLabel('Account id').getAttribute('aria-invalid')) === 'true', 'the refusal beside the field');
  withoutProvoked(admin, [404]);
  await form.getByLabel('Account id').fill(account.body.id);
  await form.getByRole('textbox', { name: 'Role' }).click();
  await admin.getByRole('option', { name: 'Provider', exact: true }).click();
  await form.getByRole('button', { name: 'Change role' }).click();
  await admin.getByTestId('role-done').filter({ hasText: `${email} is now provider.` }).waitFor();
  await checkPage(admin, 'admin-role');
  await admin.context().close();
}

/** The simulated backend only on nodes an admin marked; a re-inventory that
 * changes a node's GPUs puts it under review until an admin accepts it. */
async function anAdminMarksANodeSimulatedAndAcceptsItsReview({ browser, base }) {
  const provider = await apiLogin(base, 'provider');
  const name = `review-${Date.now()}`;
  const created = await apiCall(base, 'POST', '/v1/nodes', provider, { name, region: 'eu-west' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const gpu = (index) => ({
    index, model: 'H100-SXM5-80GB', product_name: 'H100', uuid: `GPU-${index}`, memory_mib: 81559,
    mig_capable: false, mig_mode: null, driver_version: '550.54.15', cuda_version: '12.4',
  });
  const register = (count) => apiCall(base, 'POST', '/v1/agent/register', created.body.token, {
    agent_version: '0.1.0', backend: 'simulated', hostname: name,
    host: { cpu_milli: 64000, memory_mib: 524288 }, gpus: Array.from({ length: count }, (_, i) => gpu(i)),
  });
  assert.equal((await register(2)).status, 403, 'not marked simulated yet');
  const admin = await newPage(browser);
  await signIn(admin, base, 'admin');
  await admin.goto(base + '/admin');
  // Mantine's switch input is visually hidden behind its track: click it regardless.
  await admin.getByLabel(`Simulated ${name}`).click({ force: true });
  await waitFor(async () => (await register(2)).status === 200, 'the marked node registering');
  // Its agent comes back with one GPU fewer: under review, shown to the provider.
  assert.equal((await register(1)).status, 200);
  const page = await newPage(browser);
  await signIn(page, base, 'provider');
  await page.goto(base + '/provider');
  await page.getByTestId('under-review').first().waitFor();
  await checkPage(page, 'provider-node-under-review');
  await page.context().close();
  await admin.reload();
  await admin.getByRole('button', { name: `Accept review of ${name}` }).click();
  await admin.getByRole('button', { name: `Accept review of ${name}` }).waitFor({ state: 'detached' });
  await checkPage(admin, 'admin-nodes');
  await admin.context().close();
}

/** The admin page lists the replicas: the demo's one process, leading,
 * with how far its engine has applied the journal. */
async function anAdminSeesTheReplicas({ browser, base }) {
  const admin = await newPage(browser);
  await signIn(admin, base, 'admin');
  await admin.goto(base + '/admin');
  const table = admin.getByTestId('admin-replicas');
  await table.waitFor();
  const row = table.getByRole('row').filter({ hasText: '(this one)' });
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /leader/);
  assert.match(text, /0 ms/);
  await checkPage(admin, 'admin-replicas');
  await admin.context().close();
}

export const scenarios = [
  ['the dashboard and the docs run under their Content-Security-Policy', theDashboardAndTheDocsRunUnderTheirContentSecurityPolicy],
  ['a buyer orders from the form, watches it run, reads its logs, releases it and is billed', buyerOrdersWatchesReleasesAndIsBilled],
  ['a buyer reads its capacity profile and prices its TCO against whole nodes', aBuyerReadsItsCapacityProfileAndPricesItsTco],
  ['a buyer imports a Slurm job history, reads what it refused, its concurrency and its TCO, and deletes it', aBuyerImportsASlurmHistoryAndPricesIt],
  ['a provider sees the buyer’s lease on its MIG slot', aProviderSeesTheBuyersLeaseOnItsMigSlot],
  ['a spot lease’s preemption notice counts down live', aSpotLeasesPreemptionNoticeCountsDownLive],
  ['the market page is public and live', theMarketIsPublicAndLive],
  ['an admin credits a buyer, with the problem beside its field, and reads the audit log', anAdminSetsPricesAndCreditsWithErrorsBesideTheField],
  ['the buy form shows the quote’s problem beside its field', aBuyersFormShowsTheProblemBesideItsField],
  ['a session that stops working goes back to sign in', aSessionThatStopsWorkingGoesBackToSignIn],
  ['a session refreshes itself, and signing out ends it on the server', aSessionRefreshesItselfAndSigningOutEndsItOnTheServer],
  ['a provider deletes a node, and an admin changes a role', aProviderDeletesANodeAndAnAdminChangesARole],
  ['an admin marks a node simulated and accepts the review of its changed inventory', anAdminMarksANodeSimulatedAndAcceptsItsReview],
  ['an admin sees the replicas and which one leads', anAdminSeesTheReplicas],
  ['a reserved lease shows the resale ask cap', aReservedLeaseShowsItsResaleAskCap],
  ['a reserved lease listed for resale shows when it vacates', aListedLeaseShowsWhenItVacates],
  ['the buy form quotes a cheaper resale offer', theBuyFormQuotesACheaperResaleOffer],
  ['a buyer reads the wallet and makes an API key, shown once, then revokes it', aBuyerReadsTheWalletAndMakesAnApiKeyShownOnce],
  ['a buyer places two units together from the form, sees both leases and their order type, and a fill-or-kill of too many is refused', aBuyerPlacesUnitsTogetherAndAFillOrKillIsRefusedWhole],
  ['a buyer tries a command on two MIG shapes from the trials page, reads which passed and the smallest that did, and a bad duration is named under its input', aBuyerTriesACommandOnTwoMigShapesAndReadsTheSmallestThatPassed],
];
