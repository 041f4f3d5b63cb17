import { Button, Checkbox, FileInput, Group, SegmentedControl, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { DataTable, type Column } from '../components/DataTable';
import { TimeChart } from '../components/LazyChart';
import { ModelSelect } from '../components/Pickers';
import { Figure, Section } from '../components/Section';
import { Empty, FormProblem, Loadable } from '../components/States';
import { formatTime, MODE_LABELS, shortId, UNIT_LABELS } from '../lib/format';
import { useAction } from '../lib/action';
import { formatBytes } from '../lib/download';
import { concurrencyChart, defaultedNote, FORMAT_LABELS, guessFormat, IMPORT_FORMATS, importQuery, importSummary, importWindow, rejectedNote, type ImportFormat } from '../lib/imports';
import { useLoad } from '../lib/load';
import { formatMoney, formatUnitPrice } from '../lib/money';
import { fieldError } from '../lib/problem';
import { formatSeconds, formatShare, formatUnits, groupRows, heldAnything, PERIODS, periodWindow, tcoBody, workPriced, type GroupRow, type Period, type TcoForm } from '../lib/tco';

/** A buyer's capacity profile for a chosen period, and the TCO calculator priced from it. */
export function Capacity() {
  const [period, setPeriod] = useState<Period>('30d');
  const range = useMemo(() => periodWindow(period, new Date()), [period]);
  const profile = useLoad(() => api.GET('/v1/billing/profile', { params: { query: range } }), [range]);
  // The job-history import shown below the TCO, with its own profile and TCO.
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <Stack>
      <Title order={1} size="h2">
        Capacity &amp; TCO
      </Title>
      <Section
        title="Capacity profile"
        data-testid="capacity-profile"
        aside={<SegmentedControl aria-label="Period" size="xs" value={period} onChange={(v) => setPeriod(v as Period)} data={PERIODS} />}
      >
        <Loadable loaded={profile} isEmpty={(p) => !heldAnything(p)} empty="No capacity held in this period: the TCO below can price a load you type in.">
          {(p) => <ProfileView profile={p} />}
        </Loadable>
      </Section>
      <Tco shown={profile.data && heldAnything(profile.data) ? profile.data : undefined} />
      <Imports selected={selected} onSelect={setSelected} />
      {selected && <ImportDetail key={selected} id={selected} />}
    </Stack>
  );
}

/**
 * A capacity profile: of the buyer's leases over a period, or (`of="import"`)
 * of an imported job history's jobs over its window, which have no modes and
 * no measured use.
 */
function ProfileView({ profile: p, of = 'period', testId = 'profile' }: { profile: Schemas['CapacityProfile']; of?: 'period' | 'import'; testId?: string }) {
  const loaded = { data: p, error: null, loading: false, reload: () => undefined };
  const t = p.total.tflops_units;
  const imported = of === 'import';
  const columns: (Column<GroupRow> | false)[] = [
    { header: 'Group', cell: (r) => (r.by === 'Total' ? 'All' : `${r.by}: ${r.by === 'Mode' ? (MODE_LABELS[r.group.key] ?? r.group.key) : r.group.key}`) },
    { header: 'Peak TFLOPS', cell: (r) => formatUnits(r.group.tflops_units.peak) },
    { header: 'Mean TFLOPS', cell: (r) => formatUnits(r.group.tflops_units.mean) },
    { header: 'Peak VRAM units', cell: (r) => formatUnits(r.group.vram_units.peak) },
    { header: imported ? 'Jobs' : 'Leases', cell: (r) => r.group.durations.leases },
    { header: 'p50', cell: (r) => formatSeconds(r.group.durations.p50_s) },
    { header: 'p90', cell: (r) => formatSeconds(r.group.durations.p90_s) },
    { header: 'Longest', cell: (r) => formatSeconds(r.group.durations.max_s) },
    !imported && { header: 'Used', cell: (r) => formatShare(r.group.utilization.fraction) },
  ];
  return (
    <Stack>
      <SimpleGrid cols={{ base: 1, sm: 4 }}>
        <Figure label="Peak TFLOPS held" loaded={loaded} value={() => formatUnits(t.peak)} testId={`${testId}-peak`} />
        <Figure label="Mean TFLOPS held" loaded={loaded} value={() => formatUnits(t.mean)} />
        <Figure label="Held at least half the time" loaded={loaded} value={() => formatUnits(t.baseline)} />
        {imported ? (
          <Figure label="Jobs" loaded={loaded} value={() => String(p.total.durations.leases)} testId={`${testId}-jobs`} />
        ) : (
          <Figure label="Used of what was held" loaded={loaded} value={() => formatShare(p.total.utilization.fraction)} />
        )}
      </SimpleGrid>
      {imported ? (
        <Text size="sm" c="dimmed">
          Means are over the {formatSeconds(p.elapsed_s)} from the first job&apos;s start to the last one&apos;s end, idle time included. Durations are nearest-rank
          percentiles of the jobs&apos; lengths.
        </Text>
      ) : (
        <Text size="sm" c="dimmed">
          Means are over the {formatSeconds(p.elapsed_s)} of the period so far, idle time included; {formatShare(p.spot_share)} of the TFLOPS-hours ran as spot.
          Durations are nearest-rank percentiles of the part of each lease inside the period.
        </Text>
      )}
      <DataTable
        aria-label={imported ? 'Imported profile by group' : 'Profile by group'}
        rows={groupRows(p)}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ 'data-group': r.id })}
        columns={columns.filter((c): c is Column<GroupRow> => c !== false)}
      />
    </Stack>
  );
}

const TCO_FIELDS = ['node_price_per_hour', 'months', 'utilization', 'gpu_model'];

/**
 * The TCO form and its answer: of the profile shown (else the last 30 days),
 * or, with `importId`, of that job-history import. `testId` names the
 * section and prefixes the answer's figures.
 */
function Tco({
  shown,
  importId,
  title = 'Total cost of ownership',
  testId = 'tco',
}: {
  shown?: Schemas['CapacityProfile'];
  importId?: string;
  title?: string;
  testId?: string;
}) {
  const [form, setForm] = useState<TcoForm>({ nodePricePerHour: '', months: '36', utilization: '', gpuModel: null, useShownProfile: true });
  const [answer, setAnswer] = useState<Schemas['Tco'] | null>(null);
  const { busy, problem, run } = useAction();
  const set = (patch: Partial<TcoForm>) => setForm((f) => ({ ...f, ...patch }));
  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await run(() => api.POST('/v1/tco', { body: tcoBody(form, shown, importId) }));
    setAnswer(r?.data ?? null);
  }
  return (
    <Section title={title} data-testid={testId}>
      <Text size="sm" c="dimmed" mb="sm">
        {importId
          ? "The imported jobs' load run on whole 8-GPU nodes against the same work bought as gpuex units in the cheapest mix of reserved, on-demand and spot. The GPU model defaults to the one the import used most."
          : 'Renting whole 8-GPU nodes against the same work bought as gpuex units in the cheapest mix of reserved, on-demand and spot.'}
      </Text>
      <form onSubmit={submit} aria-label={importId ? 'Price the import' : 'Price your capacity'}>
        <Group align="flex-start">
          <TextInput
            label="Node price per hour"
            inputMode="decimal"
            value={form.nodePricePerHour}
            onChange={(e) => set({ nodePricePerHour: e.currentTarget.value })}
            error={fieldError(problem, 'node_price_per_hour')}
          />
          <TextInput label="Months" inputMode="numeric" value={form.months} onChange={(e) => set({ months: e.currentTarget.value })} error={fieldError(problem, 'months')} w={100} />
          <TextInput
            label="Node utilization (0–1)"
            placeholder="sized to the peak"
            inputMode="decimal"
            value={form.utilization}
            onChange={(e) => set({ utilization: e.currentTarget.value })}
            error={fieldError(problem, 'utilization')}
          />
          <ModelSelect value={form.gpuModel} onChange={(v) => set({ gpuModel: v })} error={fieldError(problem, 'gpu_model')} clearable={!!importId} />
          <Button type="submit" mt={24} loading={busy}>
            Compare
          </Button>
        </Group>
        {!importId && (
          <Checkbox
            mt="sm"
            label={shown ? 'Price the profile shown above' : 'Price the profile shown above (none in this period: the last 30 days are used)'}
            checked={form.useShownProfile && !!shown}
            disabled={!shown}
            onChange={(e) => set({ useShownProfile: e.currentTarget.checked })}
          />
        )}
        <FormProblem problem={problem} fields={TCO_FIELDS} />
      </form>
      {answer && <TcoAnswer answer={answer} testId={testId} />}
    </Section>
  );
}

function TcoAnswer({ answer: t, testId }: { answer: Schemas['Tco']; testId: string }) {
  const a = t.assumptions;
  const loaded = { data: t, error: null, loading: false, reload: () => undefined };
  const assumptions: [string, string][] = [
    ['GPU model, region', `${a.gpu_model}, ${a.region}`],
    ['Period', `${a.months} months of ${a.hours_per_month} h`],
    ['Work priced', workPriced(a)],
    ...(a.history_from && a.history_to ? [['History window', `${formatTime(a.history_from)} – ${formatTime(a.history_to)}`] as [string, string]] : []),
    ['TFLOPS units', `peak ${formatUnits(a.profile.tflops_units.peak)}, mean ${formatUnits(a.profile.tflops_units.mean)}, baseline ${formatUnits(a.profile.tflops_units.baseline)}`],
    ['VRAM units', `peak ${formatUnits(a.profile.vram_units.peak)}, mean ${formatUnits(a.profile.vram_units.mean)}, baseline ${formatUnits(a.profile.vram_units.baseline)}`],
    ['Spot share', formatShare(a.profile.spot_share)],
    ['Spot price', `${a.spot_index} × list (${a.spot_index_source === 'market_clearing' ? "the market's clearing" : 'default discount'}), plus ${formatShare(a.spot_preemption_overhead)} redone work`],
    ['Reserved, on-demand', `${a.reserved_factor} × list, ${a.on_demand_factor} × list`],
    ['Whole node', `${a.node_gpus} GPUs at ${formatMoney(a.node_price_per_hour, t.currency)} per hour, ${formatShare(a.utilization)} busy (${a.utilization_source === 'given' ? 'given' : 'sized to the peak'})`],
    ...a.prices.map((p): [string, string] => [`List ${UNIT_LABELS[p.unit] ?? p.unit}`, formatUnitPrice(p.list, t.currency)]),
    ['How the mix is chosen', a.mix_rule],
  ];
  return (
    <Stack mt="md" data-testid={`${testId}-answer`}>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label={`Whole nodes (${t.whole_node.nodes} × ${a.node_gpus} GPUs)`} loaded={loaded} value={() => formatMoney(t.whole_node.total, t.currency)} testId={`${testId}-whole-node`} />
        <Figure label="gpuex units" loaded={loaded} value={() => formatMoney(t.gpuex.total, t.currency)} testId={`${testId}-gpuex`} />
        <Figure label={`Saving (${formatShare(t.saving.fraction)})`} loaded={loaded} value={() => formatMoney(t.saving.amount, t.currency)} testId={`${testId}-saving`} />
      </SimpleGrid>
      <Text size="sm">
        Per month: {formatMoney(t.whole_node.per_month, t.currency)} for whole nodes, {formatMoney(t.gpuex.per_month, t.currency)} on gpuex.
      </Text>
      <DataTable
        aria-label="The gpuex mix"
        rows={t.gpuex.mix}
        rowKey={(l) => `${l.unit}:${l.mode}`}
        columns={[
          { header: 'Unit', cell: (l) => UNIT_LABELS[l.unit] ?? l.unit },
          { header: 'Mode', cell: (l) => MODE_LABELS[l.mode] ?? l.mode },
          { header: 'Units per hour', cell: (l) => formatUnits(l.units) },
          { header: 'Price per unit-hour', cell: (l) => formatUnitPrice(l.price_per_unit_hour, t.currency) },
          { header: 'Per hour', cell: (l) => formatMoney(l.per_hour, t.currency) },
        ]}
      />
      <DataTable
        aria-label="Assumptions"
        rows={assumptions}
        rowKey={(r) => r[0]}
        columns={[
          { header: 'Assumption', cell: (r) => r[0] },
          { header: 'Value', cell: (r) => r[1] },
        ]}
      />
    </Stack>
  );
}

// The upload's inputs, as `fieldError` matches the server's `query.format`,
// `query.gpu_model` and `body` (a file not of its format); `file` is the
// page's own "choose a file".
const IMPORT_FIELDS = ['file', 'body', 'format', 'gpu_model'];

/** Upload a Slurm, Kubernetes or CSV job history; the imports made so far, to show or delete. */
function Imports({ selected, onSelect }: { selected: string | null; onSelect: (id: string | null) => void }) {
  const imports = useLoad(() => api.GET('/v1/profile/imports'), []);
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState<ImportFormat>('slurm');
  const [gpuModel, setGpuModel] = useState<string | null>(null);
  const [done, setDone] = useState<Schemas['ProfileImport'] | null>(null);
  const { busy, problem, setProblem, run } = useAction();
  // One key per intended import: a retried click cannot import twice, and
  // another file, format or model is another import with a key of its own.
  const [key, setKey] = useState(() => crypto.randomUUID());
  const changed = () => setKey(crypto.randomUUID());
  const deleting = useAction();
  const [confirm, setConfirm] = useState<string | null>(null);

  function chooseFile(f: File | null) {
    setFile(f);
    const guessed = f ? guessFormat(f.name) : null;
    if (guessed) setFormat(guessed);
    changed();
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setDone(null);
    if (!file) {
      setProblem({ detail: 'Choose the file to import.', errors: [{ field: 'file', message: 'Choose the file to import' }] });
      return;
    }
    const r = await run(() =>
      api.POST('/v1/profile/imports', {
        params: { query: importQuery(format, gpuModel) },
        // The File itself is the body: the browser streams it from disk (up
        // to the server's 256 MiB), the page never reads it into memory.
        body: file as unknown as string,
        bodySerializer: (b) => b,
        headers: { 'Content-Type': 'application/octet-stream', 'Idempotency-Key': key },
      }),
    );
    if (r?.data) {
      setDone(r.data);
      changed();
      imports.reload();
      onSelect(r.data.id);
    }
  }

  async function remove(id: string) {
    const r = await deleting.run(() => api.DELETE('/v1/profile/imports/{id}', { params: { path: { id } } }));
    setConfirm(null);
    if (r) {
      if (selected === id) onSelect(null);
      if (done?.id === id) setDone(null);
    }
    imports.reload();
  }

  return (
    <Section title="Imported job history" data-testid="imports">
      <Text size="sm" c="dimmed" mb="sm">
        Price a cluster&apos;s past jobs: upload <code>sacct --parsable2</code> output from Slurm, <code>kubectl get pods -o json</code> output, or a CSV of{' '}
        <code>start,end,gpus[,gpu_model][,tag]</code>. Each job holds its GPUs from its start to its end; rows naming no GPU model the catalog knows are priced as
        the default model.
      </Text>
      <form onSubmit={submit} aria-label="Import a job history" noValidate>
        <Group align="flex-start">
          <FileInput
            label="Job history file"
            placeholder="Choose a file"
            clearable
            clearButtonProps={{ 'aria-label': 'Clear the file' }}
            value={file}
            onChange={chooseFile}
            error={fieldError(problem, 'file') ?? fieldError(problem, 'body')}
            w={260}
          />
          <Select
            label="Format"
            data={IMPORT_FORMATS}
            value={format}
            onChange={(v) => {
              if (v) setFormat(v as ImportFormat);
              changed();
            }}
            allowDeselect={false}
            error={fieldError(problem, 'format')}
            w={320}
          />
          <ModelSelect
            label="Default GPU model"
            placeholder="H100-SXM5-80GB"
            clearable
            value={gpuModel}
            onChange={(v) => {
              setGpuModel(v);
              changed();
            }}
            error={fieldError(problem, 'gpu_model')}
          />
          <Button type="submit" mt={24} loading={busy}>
            Import
          </Button>
        </Group>
        <FormProblem problem={problem} title="Import refused" fields={IMPORT_FIELDS} />
      </form>
      <div aria-live="polite">{done && <ImportResult result={done} />}</div>

      <Title order={3} size="h5" mt="lg" mb="xs">
        Your imports
      </Title>
      <FormProblem problem={deleting.problem} title="Could not delete" />
      <Loadable loaded={imports} isEmpty={(l) => l.imports.length === 0} empty="No imports yet: upload a file above.">
        {(l) => (
          <DataTable
            aria-label="Your imports"
            data-testid="import-table"
            rows={l.imports}
            rowKey={(i) => i.id}
            rowProps={(i) => ({ 'data-import': i.id })}
            columns={[
              { header: 'Imported', cell: (i) => formatTime(i.created_at) },
              { header: 'Format', cell: (i) => FORMAT_LABELS[i.format] ?? i.format },
              { header: 'Jobs', cell: (i) => i.rows.toLocaleString('en-US') },
              { header: 'Refused', cell: (i) => i.rejected_count.toLocaleString('en-US') },
              { header: 'Window', cell: (i) => importWindow(i) },
              { header: 'Size', cell: (i) => formatBytes(i.bytes) },
              {
                header: 'Show',
                cell: (i) => (
                  <Button
                    size="xs"
                    variant={selected === i.id ? 'filled' : 'default'}
                    aria-pressed={selected === i.id}
                    aria-label={`Show import ${shortId(i.id)}`}
                    onClick={() => onSelect(selected === i.id ? null : i.id)}
                  >
                    Show
                  </Button>
                ),
              },
              {
                header: 'Delete',
                cell: (i) =>
                  confirm === i.id ? (
                    <Group gap="xs" wrap="nowrap">
                      <Button size="xs" color="red" loading={deleting.busy} onClick={() => void remove(i.id)} aria-label={`Yes, delete import ${shortId(i.id)}`}>
                        Yes, delete
                      </Button>
                      <Button size="xs" variant="default" onClick={() => setConfirm(null)}>
                        Cancel
                      </Button>
                    </Group>
                  ) : (
                    <Button size="xs" color="red" variant="outline" onClick={() => setConfirm(i.id)} aria-label={`Delete import ${shortId(i.id)}`}>
                      Delete
                    </Button>
                  ),
              },
            ]}
          />
        )}
      </Loadable>
    </Section>
  );
}

/** What an upload made of its file: the jobs taken, the rows skipped and each row refused with its line and why. */
function ImportResult({ result: r }: { result: Schemas['ProfileImport'] }) {
  const loaded = { data: r, error: null, loading: false, reload: () => undefined };
  const note = rejectedNote(r);
  return (
    <Stack mt="md" gap="sm" data-testid="import-result">
      <Title order={3} size="h5">
        Imported {FORMAT_LABELS[r.format]} file ({formatBytes(r.bytes)}): {importSummary(r)}
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 4 }}>
        <Figure label="Jobs taken" loaded={loaded} value={(d) => d.rows.toLocaleString('en-US')} testId="import-rows" />
        <Figure label="Rows skipped (no GPU held)" loaded={loaded} value={(d) => d.skipped.toLocaleString('en-US')} testId="import-skipped" />
        <Figure label="Rows refused" loaded={loaded} value={(d) => d.rejected_count.toLocaleString('en-US')} testId="import-rejected-count" />
        <Figure label="Jobs priced as the default model" loaded={loaded} value={(d) => d.defaulted_model_rows.toLocaleString('en-US')} />
      </SimpleGrid>
      <Text size="sm">
        Jobs from {importWindow(r)}.
        {r.defaulted_model_rows > 0 && ` ${defaultedNote(r)}`}
      </Text>
      {note && (
        <>
          <Text size="sm" fw={500}>
            {note}
          </Text>
          <DataTable
            aria-label="Refused rows"
            data-testid="import-rejected"
            rows={r.rejected}
            rowKey={(x) => `${x.line}:${x.reason}`}
            rowProps={(x) => ({ 'data-line': String(x.line) })}
            columns={[
              { header: r.format === 'k8s' ? 'Pod' : 'Line', cell: (x) => x.line },
              { header: 'Reason', cell: (x) => x.reason },
            ]}
          />
        </>
      )}
    </Stack>
  );
}

/** The selected import: its profile, the GPUs it held over time, and the TCO of its load. */
function ImportDetail({ id }: { id: string }) {
  const detail = useLoad(() => api.GET('/v1/profile/imports/{id}', { params: { path: { id } } }), [id]);
  const name = `import ${shortId(id)}`;
  return (
    <>
      <Section title={`Capacity profile of ${name}`} data-testid="import-detail">
        <Loadable loaded={detail}>
          {(d) =>
            d.profile ? (
              <Stack>
                <Text size="sm">
                  {FORMAT_LABELS[d.format]} file of {formatBytes(d.bytes)} imported {formatTime(d.created_at)}: {importSummary(d)}. Jobs from {importWindow(d)}.
                </Text>
                <ProfileView profile={d.profile} of="import" testId="import-profile" />
                <Title order={3} size="h5">
                  GPUs held over time
                </Title>
                <Concurrency points={d.concurrency} />
              </Stack>
            ) : (
              <Empty>No row of this import held a GPU: there is nothing to profile or price.</Empty>
            )
          }
        </Loadable>
      </Section>
      {detail.data?.profile && <Tco importId={id} title={`Total cost of ownership of ${name}`} testId="import-tco" />}
    </>
  );
}

/** Mean and peak GPUs held in each stretch of an import's window. */
function Concurrency({ points }: { points: Schemas['ConcurrencyPoint'][] }) {
  const chart = useMemo(() => concurrencyChart(points), [points]);
  const series = useMemo(
    () =>
      chart
        ? [
            { label: 'Mean GPUs', values: chart.mean, color: '#1971c2' },
            // Dashed over the mean, which it equals wherever the count held steady.
            { label: 'Peak GPUs', values: chart.peak, color: '#d9480f', dash: [6, 4] },
          ]
        : [],
    [chart],
  );
  if (!chart) return <Empty>No GPU was held.</Empty>;
  return (
    <div data-testid="import-concurrency">
      <TimeChart title="GPUs held over the import's window: the mean and the peak of each stretch" times={chart.times} span={chart.span} series={series} />
    </div>
  );
}
