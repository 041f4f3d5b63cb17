import { Anchor, Button, Grid, Group, Progress, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { BarList } from '../components/BarList';
import { TimeChart } from '../components/LazyChart';
import { DataTable } from '../components/DataTable';
import { Figure, Section } from '../components/Section';
import { ErrorNotice, FormProblem, Loadable } from '../components/States';
import { useAction } from '../lib/action';
import { formatTime, MODE_LABELS } from '../lib/format';
import { useLoad } from '../lib/load';
import { compare, formatMoney, percent, toChartNumber } from '../lib/money';
import { asProblem, fieldError, type Problem } from '../lib/problem';
import { dayStartSeconds } from '../lib/time';
import { fetchWithToken, saveBlob } from '../lib/download';

function monthStart(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

/** Bars whose lengths are the groups' shares of the largest (display only). */
function rows(groups: { key: string; cost: string }[], label: (k: string) => string = (k) => k) {
  const max = Math.max(...groups.map((g) => toChartNumber(g.cost)), 0);
  return [...groups]
    .sort((a, b) => compare(b.cost, a.cost))
    .map((g) => ({ key: g.key, label: label(g.key), share: max > 0 ? toChartNumber(g.cost) / max : 0, value: formatMoney(g.cost) }));
}

export function Billing() {
  const from = useMemo(monthStart, []);
  const to = useMemo(() => new Date(Date.now() + 60_000).toISOString(), []);
  const [tagKey, setTagKey] = useState('team');
  const usage = (group_by: string) => () => api.GET('/v1/billing/usage', { params: { query: { from, to, group_by } } });
  const byMode = useLoad(usage('mode'), []);
  const byModel = useLoad(usage('gpu_model'), []);
  const byDay = useLoad(usage('day'), []);
  const byTag = useLoad(usage(`tag:${tagKey || 'team'}`), [tagKey]);
  const wallet = useLoad(() => api.GET('/v1/wallet'), []);
  const invoices = useLoad(() => api.GET('/v1/billing/invoices'), []);
  const budgets = useLoad(() => api.GET('/v1/budgets'), []);
  const [downloadProblem, setDownloadProblem] = useState<Problem | null>(null);

  async function openInvoice(id: string) {
    setDownloadProblem(null);
    // Opened before the fetch so a popup blocker sees the click.
    const tab = window.open('', '_blank');
    try {
      const blob = await fetchWithToken(`/v1/billing/invoices/${encodeURIComponent(id)}?format=html`);
      const url = URL.createObjectURL(blob);
      if (tab) tab.location.href = url;
      else window.location.href = url;
    } catch (e) {
      tab?.close();
      setDownloadProblem(asProblem(e));
    }
  }

  async function downloadFocus() {
    setDownloadProblem(null);
    try {
      const blob = await fetchWithToken(`/v1/billing/export?format=focus-csv&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      saveBlob(blob, `gpuex-focus-${from.slice(0, 7)}.csv`);
    } catch (e) {
      setDownloadProblem(asProblem(e));
    }
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Billing
        </Title>
        <Button variant="outline" onClick={downloadFocus}>
          Download FOCUS CSV (this month)
        </Button>
      </Group>
      <ErrorNotice problem={downloadProblem} title="Could not download" />
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label="This month" loaded={byMode} value={(u) => formatMoney(u.total, u.currency)} testId="billing-total" />
        <Figure label="Wallet available" loaded={wallet} value={(w) => formatMoney(w.available, w.currency)} />
        <Figure label="Held for running leases" loaded={wallet} value={(w) => formatMoney(w.held, w.currency)} />
      </SimpleGrid>
      <Section title="Cost by day">
        <Loadable loaded={byDay} isEmpty={(u) => u.groups.length === 0} empty="No charges this month.">
          {(u) => (
            <TimeChart
              title="Cost by day"
              days
              times={u.groups.map((g) => dayStartSeconds(g.key))}
              series={[{ label: `Cost (${u.currency})`, values: u.groups.map((g) => toChartNumber(g.cost)), color: '#1971c2', bars: true }]}
            />
          )}
        </Loadable>
      </Section>
      <Grid>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Section title="By mode" h="100%">
            <Loadable loaded={byMode} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title="Cost by mode" rows={rows(u.groups, (k) => MODE_LABELS[k] ?? k)} />}
            </Loadable>
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Section title="By GPU model" h="100%">
            <Loadable loaded={byModel} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title="Cost by GPU model" rows={rows(u.groups)} />}
            </Loadable>
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Section
            title="By tag"
            h="100%"
            data-testid="cost-by-tag"
            aside={<TextInput size="xs" aria-label="Tag key" value={tagKey} onChange={(e) => setTagKey(e.currentTarget.value)} w={110} />}
          >
            <Loadable loaded={byTag} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title={`Cost by tag ${tagKey}`} rows={rows(u.groups, (k) => k || '(untagged)')} />}
            </Loadable>
          </Section>
        </Grid.Col>
      </Grid>
      <Budgets budgets={budgets} />
      <Section title="Invoices">
        <Loadable loaded={invoices} isEmpty={(d) => d.length === 0} empty="No invoices yet.">
          {(list) => (
            <DataTable
              rows={list}
              rowKey={(i) => i.id}
              columns={[
                { header: 'Invoice', cell: (i) => i.invoice_id },
                { header: 'Period', cell: (i) => `${formatTime(i.period_start)} – ${formatTime(i.period_end)}` },
                { header: 'Lines', cell: (i) => i.lines },
                { header: 'Total', cell: (i) => formatMoney(i.total, i.currency) },
                {
                  header: 'Printable',
                  cell: (i) => (
                    <Anchor component="button" type="button" onClick={() => openInvoice(i.id)} style={{ whiteSpace: 'nowrap' }}>
                      Open {i.id}
                    </Anchor>
                  ),
                },
              ]}
            />
          )}
        </Loadable>
      </Section>
    </Stack>
  );
}

function Budgets({ budgets }: { budgets: ReturnType<typeof useLoad<import('../api/client').Schemas['BudgetView'][]>> }) {
  const [tagKey, setTagKey] = useState('team');
  const [tagValue, setTagValue] = useState('');
  const [limit, setLimit] = useState('');
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (await run(() => api.PUT('/v1/budgets', { body: { tag_key: tagKey, tag_value: tagValue, monthly_limit: limit.trim() } }))) {
      setLimit('');
      budgets.reload();
    }
  }
  return (
    <Section title="Budgets">
      <Loadable loaded={budgets} isEmpty={(d) => d.length === 0} empty="No budgets: set one below to get a notice before a tag overspends.">
        {(list) => (
          <Stack gap="sm" mb="md">
            {list.map((b) => {
              const used = percent(b.spent, b.monthly_limit);
              const over = compare(b.spent, b.monthly_limit) >= 0;
              return (
                <div key={`${b.tag_key}=${b.tag_value}`}>
                  <Group justify="space-between">
                    <Text fw={500}>
                      {b.tag_key}={b.tag_value}
                    </Text>
                    <Text size="sm">
                      {formatMoney(b.spent, b.currency)} of {formatMoney(b.monthly_limit, b.currency)} ({used === '0' && compare(b.spent, '0') > 0 ? 'under 0.1' : used} %)
                    </Text>
                  </Group>
                  <Progress
                    value={Math.min(toChartNumber(used), 100)}
                    color={over ? 'red.9' : 'blue.8'}
                    aria-label={`Budget ${b.tag_key}=${b.tag_value}: ${used} % used`}
                  />
                </div>
              );
            })}
          </Stack>
        )}
      </Loadable>
      <form onSubmit={submit}>
        <Group align="flex-start">
          <TextInput label="Tag key" value={tagKey} onChange={(e) => setTagKey(e.currentTarget.value)} error={fieldError(problem, 'tag_key')} />
          <TextInput label="Tag value" value={tagValue} onChange={(e) => setTagValue(e.currentTarget.value)} error={fieldError(problem, 'tag_value')} />
          <TextInput
            label="Monthly limit"
            inputMode="decimal"
            value={limit}
            onChange={(e) => setLimit(e.currentTarget.value)}
            error={fieldError(problem, 'monthly_limit')}
          />
          <Button type="submit" mt={24} loading={busy}>
            Set budget
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
    </Section>
  );
}
