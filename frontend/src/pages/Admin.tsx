import { Alert, Button, Card, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { Loadable } from '../components/States';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney, formatUnitPrice } from '../lib/money';
import { asProblem, fieldError, type Problem } from '../lib/problem';

function FormProblem({ problem }: { problem: Problem | null }) {
  if (!problem || problem.errors?.length) return null;
  return (
    <Alert color="red" role="alert" mt="xs">
      {problem.detail}
    </Alert>
  );
}

export function Admin() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Admin
      </Title>
      <Prices />
      <Regions />
      <Credits />
    </Stack>
  );
}

function Prices() {
  const prices = useLoad(() => api.GET('/v1/prices'), []);
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  const [region, setRegion] = useState<string | null>(null);
  const [model, setModel] = useState<string | null>(null);
  const [unit, setUnit] = useState<string | null>('tflops_h');
  const [price, setPrice] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const { error } = await api.PUT('/v1/admin/prices', {
      body: [{ region: region ?? '', gpu_model: model ?? '', unit: unit as Schemas['Unit'], list_price: price.trim() }],
    });
    setBusy(false);
    if (error) setProblem(asProblem(error));
    else {
      setPrice('');
      prices.reload();
    }
  }
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        List prices
      </Title>
      <form onSubmit={submit} aria-label="Set a list price">
        <Group align="flex-start" mb="md">
          <Select label="Region" data={(regions.data ?? []).map((r) => r.name)} value={region} onChange={setRegion} error={fieldError(problem, 'region')} />
          <Select
            label="GPU model"
            searchable
            data={(catalog.data ?? []).map((m) => m.name)}
            value={model}
            onChange={setModel}
            error={fieldError(problem, 'gpu_model')}
          />
          <Select
            label="Unit"
            data={[
              { value: 'tflops_h', label: 'TFLOPS-hour' },
              { value: 'vram_h', label: '4 GB VRAM-hour' },
            ]}
            value={unit}
            onChange={setUnit}
            error={fieldError(problem, 'unit')}
          />
          <TextInput label="List price" inputMode="decimal" value={price} onChange={(e) => setPrice(e.currentTarget.value)} error={fieldError(problem, 'list_price')} />
          <Button type="submit" mt={24} loading={busy}>
            Set price
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
      <Loadable loaded={prices} isEmpty={(d) => d.length === 0} empty="No list prices yet: set the first above.">
        {(list) => (
          <Table striped data-testid="admin-prices">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Region</Table.Th>
                <Table.Th>GPU</Table.Th>
                <Table.Th>Unit</Table.Th>
                <Table.Th>List</Table.Th>
                <Table.Th>Updated</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((p) => (
                <Table.Tr key={`${p.region}|${p.gpu_model}|${p.unit}`}>
                  <Table.Td>{p.region}</Table.Td>
                  <Table.Td>{p.gpu_model}</Table.Td>
                  <Table.Td>{p.unit}</Table.Td>
                  <Table.Td>{formatUnitPrice(p.list, p.currency)}</Table.Td>
                  <Table.Td>{formatTime(p.updated_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Loadable>
    </Card>
  );
}

function Regions() {
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const [name, setName] = useState('');
  const [timezone, setTimezone] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const { error } = await api.PUT('/v1/admin/regions/{name}', { params: { path: { name } }, body: { timezone } });
    setBusy(false);
    if (error) setProblem(asProblem(error));
    else regions.reload();
  }
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Regions
      </Title>
      <Loadable loaded={regions} isEmpty={(d) => d.length === 0} empty="No regions yet.">
        {(list) => (
          <Table mb="md">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Region</Table.Th>
                <Table.Th>Time zone</Table.Th>
                <Table.Th>Updated</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((r) => (
                <Table.Tr key={r.name}>
                  <Table.Td>{r.name}</Table.Td>
                  <Table.Td>{r.timezone}</Table.Td>
                  <Table.Td>{formatTime(r.updated_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Loadable>
      <form onSubmit={submit} aria-label="Add or change a region">
        <Group align="flex-start">
          <TextInput label="Region" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} />
          <TextInput
            label="IANA time zone"
            placeholder="Europe/Amsterdam"
            value={timezone}
            onChange={(e) => setTimezone(e.currentTarget.value)}
            error={fieldError(problem, 'timezone')}
          />
          <Button type="submit" mt={24} loading={busy}>
            Save region
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
    </Card>
  );
}

function Credits() {
  const [userId, setUserId] = useState('');
  const [amount, setAmount] = useState('');
  const [memo, setMemo] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [done, setDone] = useState<Schemas['CreditView'] | null>(null);
  const [busy, setBusy] = useState(false);
  // One key per intended credit: a retried click cannot credit twice.
  const [key, setKey] = useState(() => crypto.randomUUID());
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    setDone(null);
    const { data, error } = await api.POST('/v1/admin/credits', {
      body: { user_id: userId.trim(), amount: amount.trim(), ...(memo.trim() ? { memo } : {}) },
      headers: { 'Idempotency-Key': key },
    });
    setBusy(false);
    if (error || !data) setProblem(asProblem(error));
    else {
      setDone(data);
      setKey(crypto.randomUUID());
    }
  }
  return (
    <Card withBorder component="form" onSubmit={submit} aria-label="Credit a user">
      <Title order={2} size="h4" mb="xs">
        Credits
      </Title>
      <Group align="flex-start">
        <TextInput label="User id" w={340} value={userId} onChange={(e) => setUserId(e.currentTarget.value)} error={fieldError(problem, 'user_id')} />
        <TextInput label="Amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.currentTarget.value)} error={fieldError(problem, 'amount')} />
        <TextInput label="Memo" value={memo} onChange={(e) => setMemo(e.currentTarget.value)} error={fieldError(problem, 'memo')} />
        <Button type="submit" mt={24} loading={busy}>
          Credit
        </Button>
      </Group>
      <FormProblem problem={problem} />
      {done && (
        <Text mt="xs" data-testid="credit-done">
          Credited {formatMoney(done.amount, done.currency)}; available now {formatMoney(done.available, done.currency)}.
        </Text>
      )}
    </Card>
  );
}
