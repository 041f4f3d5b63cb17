// The Capacity page's scenarios: the profile and TCO of the demo buyer's
// history, and of a Slurm history imported through the page.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { apiCall, apiLogin, newPage, repo, signIn, waitFor } from './harness.mjs';
import { checkPage, withoutProvoked } from './checks.mjs';

export async function aBuyerReadsItsCapacityProfileAndPricesItsTco({ browser, base }) {
  // The demo's buyer has run leases this month; billing writes their lines every 10 s.
  const token = await apiLogin(base, 'buyer');
  const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
  const to = new Date(Date.now() + 120_000).toISOString();
  await waitFor(async () => {
    const p = await apiCall(base, 'GET', `/v1/billing/profile?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, token);
    return p.status === 200 && p.body.total.tflops_units.unit_hours !== '0';
  }, 'a profile with capacity held', 60_000, 1000);
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.getByRole('link', { name: 'Capacity & TCO' }).click();
  await page.waitForURL('**/capacity');
  await page.getByTestId('profile-peak').waitFor();
  await page.locator('[data-group="all"]').waitFor();
  // A field the server refuses is named beside its input.
  await page.getByLabel('Node price per hour').fill('0');
  await page.getByRole('button', { name: 'Compare' }).click();
  await waitFor(async () => (await page.getByLabel('Node price per hour').getAttribute('aria-invalid')) === 'true', 'the refusal beside the field');
  withoutProvoked(page, [422]);
  // The answer: both totals, the saving, the mix and its assumptions.
  await page.getByLabel('Node price per hour').fill('25');
  await page.getByRole('button', { name: 'Compare' }).click();
  await page.getByTestId('tco-answer').waitFor();
  assert.match(await page.getByTestId('tco-gpuex').textContent(), /^\$[\d,]+\.\d\d$/);
  assert.match(await page.getByTestId('tco-whole-node').textContent(), /^\$[\d,]+\.\d\d$/);
  await page.getByRole('table', { name: 'Assumptions' }).getByText('How the mix is chosen').waitFor();
  await page.getByRole('table', { name: 'The gpuex mix' }).locator('tbody tr').first().waitFor();
  await checkPage(page, 'capacity');
  await page.context().close();
}

/** The repository's Slurm sample through the page: 3 jobs taken, lines 8
 * (still running) and 9 (hour 25) refused, its concurrency drawn and its TCO
 * priced (tests/api/imports.rs works the figures out by hand). */
export async function aBuyerImportsASlurmHistoryAndPricesIt({ browser, base }) {
  const page = await newPage(browser);
  await signIn(page, base, 'buyer');
  await page.goto(base + '/capacity');
  const form = page.getByRole('form', { name: 'Import a job history' });
  const file = page.locator('input[type=file]');
  // A file not of its format is refused, named beside the file input.
  await file.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('no|header|here\n1|2|3\n') });
  await form.getByRole('button', { name: 'Import' }).click();
  await waitFor(async () => (await form.getByRole('button', { name: 'Job history file' }).getAttribute('aria-invalid')) === 'true', 'the refusal beside the file');
  withoutProvoked(page, [422]);

  await file.setInputFiles(join(repo, 'data/imports/sacct.txt'));
  await form.getByRole('textbox', { name: 'Format' }).click();
  await page.getByRole('option', { name: 'Slurm (sacct --parsable2)', exact: true }).click();
  await form.getByRole('button', { name: 'Import' }).click();
  const result = page.getByTestId('import-result');
  await result.waitFor();
  assert.equal(await result.getByTestId('import-rows').textContent(), '3');
  assert.equal(await result.getByTestId('import-skipped').textContent(), '4');
  assert.equal(await result.getByTestId('import-rejected-count').textContent(), '2');
  const refused = result.getByRole('table', { name: 'Refused rows' }).locator('tbody tr');
  assert.deepEqual(await refused.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-line'))), ['8', '9']);
  assert.match(await refused.first().textContent(), /still running/);

  // The new import is listed and shown: its profile, its GPUs over time, its TCO.
  const row = page.getByTestId('import-table').locator('tbody tr').first();
  const id = await row.getAttribute('data-import');
  assert.match(id, /^[0-9a-f-]{36}$/);
  const short = id.replace(/-/g, '').slice(-8);
  assert.equal(await page.getByRole('button', { name: `Show import ${short}` }).getAttribute('aria-pressed'), 'true');
  const detail = page.getByTestId('import-detail');
  // 2 × A100 and 4 + 1 × H100 at once: 624 + 3,956 + 989 TFLOPS.
  await waitFor(async () => (await detail.getByTestId('import-profile-peak').textContent().catch(() => '')) === '5,569', 'the import’s profile');
  assert.equal(await detail.getByTestId('import-profile-jobs').textContent(), '3');
  await detail.locator('[data-group="GPU model:A100-SXM4-40GB"]').waitFor();
  const chart = detail.getByTestId('import-concurrency').getByRole('img', { name: /GPUs held over the import's window/ });
  await chart.locator('canvas').waitFor();
  assert.match(await chart.textContent(), /Mean GPUs.*Peak GPUs/);
  const tco = page.getByTestId('import-tco');
  await tco.getByLabel('Node price per hour').fill('20');
  await tco.getByRole('button', { name: 'Compare' }).click();
  await tco.getByTestId('import-tco-answer').waitFor();
  assert.match(await tco.getByTestId('import-tco-gpuex').textContent(), /^\$[\d,]+\.\d\d$/);
  assert.match(await tco.getByTestId('import-tco-whole-node').textContent(), /^\$[\d,]+\.\d\d$/);
  const assumptions = tco.getByRole('table', { name: 'Assumptions' });
  await assumptions.getByText(`the imported job history ${short}`).waitFor();
  await assumptions.getByText('H100-SXM5-80GB', { exact: false }).first().waitFor();
  await checkPage(page, 'capacity-import');

  // Deleting it asks once more, then it is gone from the list and the server.
  await page.getByRole('button', { name: `Delete import ${short}` }).click();
  await page.getByRole('button', { name: `Yes, delete import ${short}` }).click();
  await page.locator(`[data-import="${id}"]`).waitFor({ state: 'detached' });
  await detail.waitFor({ state: 'detached' });
  const token = await apiLogin(base, 'buyer');
  assert.equal((await apiCall(base, 'GET', `/v1/profile/imports/${id}`, token)).status, 404);
  await page.context().close();
}
