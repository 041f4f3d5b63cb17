import { Button, Checkbox, Group, SegmentedControl, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { DataTable } from '../components/DataTable';
import { ModelSelect } from '../components/Pickers';
import { Figure, Section } from '../components/Section';
import { FormProblem, Loadable } from '../components/States';
import { MODE_LABELS, UNIT_LABELS } from '../lib/format';
import { useAction } from '../lib/action';
import { useLoad } from '../lib/load';
import { formatMoney, formatUnitPrice } from '../lib/money';
import { fieldError } from '../lib/problem';
import { formatSeconds, formatShare, formatUnits, groupRows, heldAnything, PERIODS, periodWindow, tcoBody, type Period, type TcoForm } from '../lib/tco';

/** A buyer's capacity profile for a chosen period, and the TCO calculator priced from it. */
export function Capacity() {
  const [period, setPeriod] = useState<Period>('30d');
  const range = useMemo(() => periodWindow(period, new Date()), [period]);
  const profile = useLoad(() => api.GET('/v1/billing/profile', { params: { query: range } }), [range]);
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
    </Stack>
  );
}

function ProfileView({ profile: p }: { profile: Schemas['CapacityProfile'] }) {
  const loaded = { data: p, error: null, loading: false, reload: () => undefined };
  const t = p.total.tflops_units;
  return (
    <Stack>
      <SimpleGrid cols={{ base: 1, sm: 4 }}>
        <Figure label="Peak TFLOPS held" loaded={loaded} value={() => formatUnits(t.peak)} testId="profile-peak" />
        <Figure label="Mean TFLOPS held" loaded={loaded} value={() => formatUnits(t.mean)} />
        <Figure label="Held at least half the time" loaded={loaded} value={() => formatUnits(t.baseline)} />
        <Figure label="Used of what was held" loaded={loaded} value={() => formatShare(p.total.utilization.fraction)} />
      </SimpleGrid>
      <Text size="sm" c="dimmed">
        Means are over the {formatSeconds(p.elapsed_s)} of the period so far, idle time included; {formatShare(p.spot_share)} of the TFLOPS-hours ran as spot.
        Durations are nearest-rank percentiles of the part of each lease inside the period.
      </Text>
      <DataTable
        rows={groupRows(p)}
        rowKey={(r) => r.id}
        rowProps={(r) => ({ 'data-group': r.id })}
        columns={[
          { header: 'Group', cell: (r) => (r.by === 'Total' ? 'All' : `${r.by}: ${r.by === 'Mode' ? (MODE_LABELS[r.group.key] ?? r.group.key) : r.group.key}`) },
          { header: 'Peak TFLOPS', cell: (r) => formatUnits(r.group.tflops_units.peak) },
          { header: 'Mean TFLOPS', cell: (r) => formatUnits(r.group.tflops_units.mean) },
          { header: 'Peak VRAM units', cell: (r) => formatUnits(r.group.vram_units.peak) },
          { header: 'Leases', cell: (r) => r.group.durations.leases },
          { header: 'p50', cell: (r) => formatSeconds(r.group.durations.p50_s) },
          { header: 'p90', cell: (r) => formatSeconds(r.group.durations.p90_s) },
          { header: 'Longest', cell: (r) => formatSeconds(r.group.durations.max_s) },
          { header: 'Used', cell: (r) => formatShare(r.group.utilization.fraction) },
        ]}
      />
    </Stack>
  );
}

function Tco({ shown }: { shown?: Schemas['CapacityProfile'] }) {
  const [form, setForm] = useState<TcoForm>({ nodePricePerHour: '', months: '36', utilization: '', gpuModel: null, useShownProfile: true });
  const [answer, setAnswer] = useState<Schemas['Tco'] | null>(null);
  const { busy, problem, run } = useAction();
  const set = (patch: Partial<TcoForm>) => setForm((f) => ({ ...f, ...patch }));
  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await run(() => api.POST('/v1/tco', { body: tcoBody(form, shown) }));
    setAnswer(r?.data ?? null);
  }
  return (
    <Section title="Total cost of ownership" data-testid="tco">
      <Text size="sm" c="dimmed" mb="sm">
        Renting whole 8-GPU nodes against the same work bought as gpuex units in the cheapest mix of reserved, on-demand and spot.
      </Text>
      <form onSubmit={submit}>
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
          <ModelSelect value={form.gpuModel} onChange={(v) => set({ gpuModel: v })} error={fieldError(problem, 'gpu_model')} />
          <Button type="submit" mt={24} loading={busy}>
            Compare
          </Button>
        </Group>
        <Checkbox
          mt="sm"
          label={shown ? 'Price the profile shown above' : 'Price the profile shown above (none in this period: the last 30 days are used)'}
          checked={form.useShownProfile && !!shown}
          disabled={!shown}
          onChange={(e) => set({ useShownProfile: e.currentTarget.checked })}
        />
        <FormProblem problem={problem} />
      </form>
      {answer && <TcoAnswer answer={answer} />}
    </Section>
  );
}

function TcoAnswer({ answer: t }: { answer: Schemas['Tco'] }) {
  const a = t.assumptions;
  const loaded = { data: t, error: null, loading: false, reload: () => undefined };
  const assumptions: [string, string][] = [
    ['GPU model, region', `${a.gpu_model}, ${a.region}`],
    ['Period', `${a.months} months of ${a.hours_per_month} h`],
    ['Work priced', a.profile_source === 'history' ? 'your last 30 days' : 'the profile given'],
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
    <Stack mt="md" data-testid="tco-answer">
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label={`Whole nodes (${t.whole_node.nodes} × ${a.node_gpus} GPUs)`} loaded={loaded} value={() => formatMoney(t.whole_node.total, t.currency)} testId="tco-whole-node" />
        <Figure label="gpuex units" loaded={loaded} value={() => formatMoney(t.gpuex.total, t.currency)} testId="tco-gpuex" />
        <Figure label={`Saving (${formatShare(t.saving.fraction)})`} loaded={loaded} value={() => formatMoney(t.saving.amount, t.currency)} testId="tco-saving" />
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
