// Trials through the page (DESIGN §22): a command run once on two MIG
// shapes of the demo's H100s in eu-west (node h100-mig: four GPUs in MIG
// mode); it maps 12 GB, more than a 1g.10gb slice holds, so it fails there
// and passes on 3g.40gb, the smallest that passed. A field the server
// refuses is named under its input.
//
// The simulated backend stands a slice's GPU memory in with an address-space
// limit, which only the process launcher applies (podman knows no
// `--ulimit as`), and the demo's container image has no python3: this
// scenario runs its own demo with `--launcher process`.
import assert from 'node:assert/strict';
import { apiCall, apiLogin, newPage, signIn, startDemo, waitFor } from './harness.mjs';
import { checkPage, withoutProvoked } from './checks.mjs';

const H100 = 'H100-SXM5-80GB';
const MAPS_12_GB = "python3 -c 'import mmap, time; m = mmap.mmap(-1, 12 * 10**9); time.sleep(2)'";
/** As the dashboard shows an id: its last eight hex digits. */
const shortId = (id) => id.replace(/-/g, '').slice(-8);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function aBuyerTriesACommandOnTwoMigShapesAndReadsTheSmallestThatPassed({ browser }) {
  const demo = await startDemo(undefined, ['--launcher', 'process']);
  try {
    await tryTwoShapes(browser, demo.base);
  } finally {
    await demo.stop();
  }
}

async function tryTwoShapes(browser, base) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.getByRole('link', { name: 'Trials', exact: true }).click();
  await page.waitForURL('**/trials');
  const form = page.getByRole('form', { name: 'Start a trial' });
  await form.getByRole('textbox', { name: 'GPU model' }).click();
  await page.getByRole('option', { name: H100, exact: true }).click();
  // The model's MIG profiles come from the catalog, smallest first, then shares and the whole GPU.
  const shapes = form.getByTestId('trial-shapes').getByRole('checkbox');
  await waitFor(async () => (await shapes.count()) === 9, "the H100's nine shapes");
  const labels = await shapes.evaluateAll((boxes) => boxes.map((b) => b.value));
  assert.deepEqual(labels, ['mig-1g.10gb', 'mig-1g.20gb', 'mig-2g.20gb', 'mig-3g.40gb', 'mig-4g.40gb', 'mig-7g.80gb', 'shared-250', 'shared-500', 'whole']);
  await form.getByRole('checkbox', { name: 'mig-3g.40gb' }).check();
  await form.getByRole('checkbox', { name: 'mig-1g.10gb' }).check();
  await form.getByRole('textbox', { name: 'Region' }).click();
  await page.getByRole('option', { name: 'eu-west', exact: true }).click();
  await form.getByLabel('Command').fill(MAPS_12_GB);

  // Past 600 s: the server names duration_s, shown under the duration.
  const duration = form.getByLabel('Duration (s)');
  await duration.fill('700');
  await form.getByRole('button', { name: 'Start trial' }).click();
  await waitFor(async () => (await duration.getAttribute('aria-invalid')) === 'true', 'the refusal under Duration');
  const described = await duration.getAttribute('aria-describedby');
  const errorId = described.split(' ').find((id) => id.endsWith('-error'));
  assert.match(await page.locator(`[id="${errorId}"]`).textContent(), /must be between 60 and 600/);
  assert.equal(await form.getByLabel('Command').getAttribute('aria-invalid'), 'false', 'only the duration is named');
  assert.match(page.url(), /\/trials$/, 'nothing started');
  withoutProvoked(page, [422]);
  await checkPage(page, 'trial-field-error');

  await duration.fill('120');
  await form.getByRole('button', { name: 'Start trial' }).click();
  await page.waitForURL(/\/trials\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop();
  const navigations = [];
  page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));

  // Read again every 2 s until done, with no reload.
  const result = page.locator(`[data-testid="trial-result"][data-trial="${id}"]`);
  await result.waitFor();
  await result.and(page.locator('[data-state="done"]')).waitFor({ timeout: 90_000 });
  assert.deepEqual(navigations, [], 'the page was not reloaded');
  const row = (shape) => result.getByTestId('trial-runs').locator(`tbody tr[data-shape="${shape}"]`);
  assert.equal(await row('mig-1g.10gb').getByTestId('run-state').textContent(), 'failed');
  assert.equal(await row('mig-3g.40gb').getByTestId('run-state').textContent(), 'passed');
  const cells = async (shape) => (await row(shape).locator('td').allInnerTexts()).map((t) => t.trim());
  const small = await cells('mig-1g.10gb');
  const mid = await cells('mig-3g.40gb');
  // Shape, State, Placed, Exit code, Peak memory, Utilization, Per hour, Lease, Reason.
  assert.equal(small[2], 'mig 1g.10gb');
  assert.notEqual(small[3], '0');
  assert.notEqual(small[3], '—');
  assert.match(small[8], /exit_code/);
  assert.equal(mid[2], 'mig 3g.40gb');
  assert.equal(mid[3], '0');
  assert.match(mid[6], /^\$[\d,]+\.\d\d$/);
  assert.equal(mid[8], '—');
  // The answer, said and marked in the table.
  assert.match(await result.getByTestId('trial-verdict').textContent(), /^Smallest that passed: mig-3g\.40gb at \$[\d,]+\.\d\d\/h$/);
  assert.equal(await result.locator('tr[data-smallest="true"]').getAttribute('data-shape'), 'mig-3g.40gb');

  // The page says what the API says: each run's lease, linked.
  const token = await apiLogin(base, 'buyer');
  const api = await apiCall(base, 'GET', `/v1/trials/${id}`, token);
  assert.equal(api.status, 200);
  assert.equal(api.body.smallest_passed.shape, 'mig-3g.40gb');
  for (const run of api.body.runs) {
    assert.match(run.lease_id, UUID);
    const link = row(run.shape).getByRole('link', { name: `Lease ${shortId(run.lease_id)} of ${run.shape}`, exact: true });
    assert.equal(await link.getAttribute('href'), `/leases/${run.lease_id}`);
  }
  const price = `$${Number(api.body.smallest_passed.price_per_hour).toFixed(2)}`;
  assert.equal(mid[6], price);
  assert.equal(await result.getByTestId('trial-verdict').textContent(), `Smallest that passed: mig-3g.40gb at ${price}/h`);

  // Listed, shown as chosen; the list chooses it again after leaving it.
  const list = page.getByTestId('trial-table');
  await list.locator(`tr[data-trial="${id}"]`).filter({ hasText: 'mig-3g.40gb (' }).waitFor();
  const short = shortId(id);
  assert.equal(await page.getByRole('button', { name: `Show trial ${short}` }).getAttribute('aria-pressed'), 'true');
  await checkPage(page, 'trial-done');

  const midLease = api.body.runs.find((r) => r.shape === 'mig-3g.40gb').lease_id;
  await row('mig-3g.40gb').getByRole('link', { name: `Lease ${shortId(midLease)} of mig-3g.40gb` }).click();
  await page.waitForURL(`**/leases/${midLease}`);
  await page.goto(base + '/trials');
  await page.getByTestId('trial-table').waitFor();
  assert.equal(await result.count(), 0, 'no trial shown until one is chosen');
  await page.getByRole('button', { name: `Show trial ${short}` }).click();
  await page.waitForURL(`**/trials/${id}`);
  await result.getByTestId('trial-verdict').filter({ hasText: 'Smallest that passed: mig-3g.40gb' }).waitFor();
  await page.context().close();
}
