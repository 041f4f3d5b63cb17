import { Alert, Anchor, Button, Card, Grid, Group, Progress, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { BarList, TimeChart } from '../components/Chart';
import { ErrorNotice, Loadable } from '../components/States';
import { formatTime, MODE_LABELS } from '../lib/format';
import { useLoad } from '../lib/load';
import { compare, formatMoney, percent, toChartNumber } from '../lib/money';
import { asProblem, fieldError, type Problem } from '../lib/problem';
import { session } from '../lib/session';

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

/** Authenticated downloads: the browser cannot add the token to a plain link. */
async function fetchWithToken(path: string): Promise<Blob> {
  const r = await fetch(path, { headers: { Authorization: `Bearer ${session.token()}` } });
  if (!r.ok) throw asProblem(await r.json().catch(() => null), `The server answered ${r.status}.`);
  return r.blob();
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
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `gpuex-focus-${from.slice(0, 7)}.csv`;
      a.click();
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
        <Card withBorder>
          <Text size="sm" c="dimmed">
            This month
          </Text>
          <Loadable loaded={byMode}>
            {(u) => (
              <Text size="xl" fw={700} data-testid="billing-total">
                {formatMoney(u.total, u.currency)}
              </Text>
            )}
          </Loadable>
        </Card>
        <Card withBorder>
          <Text size="sm" c="dimmed">
            Wallet available
          </Text>
          <Loadable loaded={wallet}>
            {(w) => (
              <Text size="xl" fw={700}>
                {formatMoney(w.available, w.currency)}
              </Text>
            )}
          </Loadable>
        </Card>
        <Card withBorder>
          <Text size="sm" c="dimmed">
            Held for running leases
          </Text>
          <Loadable loaded={wallet}>
            {(w) => (
              <Text size="xl" fw={700}>
                {formatMoney(w.held, w.currency)}
              </Text>
            )}
          </Loadable>
        </Card>
      </SimpleGrid>
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Cost by day
        </Title>
        <Loadable loaded={byDay} isEmpty={(u) => u.groups.length === 0} empty="No charges this month.">
          {(u) => (
            <TimeChart
              title="Cost by day"
              times={u.groups.map((g) => Date.parse(g.key) / 1000)}
              series={[{ label: `Cost (${u.currency})`, values: u.groups.map((g) => toChartNumber(g.cost)), color: '#1971c2', bars: true }]}
            />
          )}
        </Loadable>
      </Card>
      <Grid>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Card withBorder h="100%">
            <Title order={2} size="h4" mb="xs">
              By mode
            </Title>
            <Loadable loaded={byMode} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title="Cost by mode" rows={rows(u.groups, (k) => MODE_LABELS[k] ?? k)} />}
            </Loadable>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Card withBorder h="100%">
            <Title order={2} size="h4" mb="xs">
              By GPU model
            </Title>
            <Loadable loaded={byModel} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title="Cost by GPU model" rows={rows(u.groups)} />}
            </Loadable>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Card withBorder h="100%" data-testid="cost-by-tag">
            <Group justify="space-between" mb="xs">
              <Title order={2} size="h4">
                By tag
              </Title>
              <TextInput size="xs" aria-label="Tag key" value={tagKey} onChange={(e) => setTagKey(e.currentTarget.value)} w={110} />
            </Group>
            <Loadable loaded={byTag} isEmpty={(u) => u.groups.length === 0} empty="No charges yet.">
              {(u) => <BarList title={`Cost by tag ${tagKey}`} rows={rows(u.groups, (k) => k || '(untagged)')} />}
            </Loadable>
          </Card>
        </Grid.Col>
      </Grid>
      <Budgets budgets={budgets} />
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Invoices
        </Title>
        <Loadable loaded={invoices} isEmpty={(d) => d.length === 0} empty="No invoices yet.">
          {(list) => (
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Invoice</Table.Th>
                  <Table.Th>Period</Table.Th>
                  <Table.Th>Lines</Table.Th>
                  <Table.Th>Total</Table.Th>
                  <Table.Th>Printable</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((i) => (
                  <Table.Tr key={i.id}>
                    <Table.Td>{i.invoice_id}</Table.Td>
                    <Table.Td>
                      {formatTime(i.period_start)} – {formatTime(i.period_end)}
                    </Table.Td>
                    <Table.Td>{i.lines}</Table.Td>
                    <Table.Td>{formatMoney(i.total, i.currency)}</Table.Td>
                    <Table.Td>
                      <Anchor component="button" type="button" onClick={() => openInvoice(i.id)}>
                        Open {i.id}
                      </Anchor>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Loadable>
      </Card>
    </Stack>
  );
}

function Budgets({ budgets }: { budgets: ReturnType<typeof useLoad<import('../api/client').Schemas['BudgetView'][]>> }) {
  const [tagKey, setTagKey] = useState('team');
  const [tagValue, setTagValue] = useState('');
  const [limit, setLimit] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const { error } = await api.PUT('/v1/budgets', { body: { tag_key: tagKey, tag_value: tagValue, monthly_limit: limit.trim() } });
    setBusy(false);
    if (error) setProblem(asProblem(error));
    else {
      setLimit('');
      budgets.reload();
    }
  }
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Budgets
      </Title>
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
                      {formatMoney(b.spent, b.currency)} of {formatMoney(b.monthly_limit, b.currency)} ({used} %)
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
        {problem && !problem.errors?.length && (
          <Alert color="red" mt="xs" role="alert">
            {problem.detail}
          </Alert>
        )}
      </form>
    </Card>
  );
}
