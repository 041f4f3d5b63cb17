import { Alert, Anchor, Badge, Button, Card, Code, Group, NumberInput, Select, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, type Schemas } from '../api/client';
import { TimeChart } from '../components/Chart';
import { ErrorNotice, Loadable } from '../components/States';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
import { add, formatMoney, toChartNumber } from '../lib/money';
import { asProblem, fieldError, type Problem } from '../lib/problem';

export function NodeStatusBadge({ node }: { node: Schemas['NodeSummary'] }) {
  const color = node.status === 'online' ? '#1b5e20' : '#a61e1e';
  return (
    <Group gap={4}>
      <Badge color={color}>{node.status}</Badge>
      {node.cordoned && <Badge color="#343a40">cordoned</Badge>}
      {node.quarantined && <Badge color="#a61e1e">quarantined</Badge>}
    </Group>
  );
}

export function Provider() {
  const nodes = useLoad(() => api.GET('/v1/nodes'), []);
  useEffect(() => {
    const t = setInterval(nodes.reload, 5000);
    return () => clearInterval(t);
  }, [nodes.reload]);
  const [problem, setProblem] = useState<Problem | null>(null);

  async function cordon(id: string, cordoned: boolean) {
    setProblem(null);
    const { error } = await api.POST('/v1/nodes/{id}/cordon', { params: { path: { id } }, body: { cordoned } });
    if (error) setProblem(asProblem(error));
    nodes.reload();
  }

  return (
    <Stack>
      <Title order={1} size="h2">
        Nodes
      </Title>
      <ErrorNotice problem={problem} title="Refused" />
      <Card withBorder>
        <Loadable loaded={nodes} isEmpty={(d) => d.length === 0} empty="No nodes yet: add one below and start its agent.">
          {(list) => (
            <Table data-testid="node-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Node</Table.Th>
                  <Table.Th>Region</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>GPUs</Table.Th>
                  <Table.Th>Last heartbeat</Table.Th>
                  <Table.Th>Cordon</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((n) => (
                  <Table.Tr key={n.id}>
                    <Table.Td>
                      <Anchor component={Link} href={`/provider/nodes/${n.id}`}>
                        {n.name}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{n.region}</Table.Td>
                    <Table.Td>
                      <NodeStatusBadge node={n} />
                    </Table.Td>
                    <Table.Td>{n.gpu_count}</Table.Td>
                    <Table.Td>{formatTime(n.last_heartbeat_at)}</Table.Td>
                    <Table.Td>
                      <Switch
                        aria-label={`Cordon ${n.name}`}
                        checked={n.cordoned}
                        onChange={(e) => cordon(n.id, e.currentTarget.checked)}
                      />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Loadable>
      </Card>
      <Earnings />
      <NewNode onCreated={nodes.reload} />
    </Stack>
  );
}

function Earnings() {
  const from = useMemo(() => new Date(Date.now() - 30 * 86400_000).toISOString(), []);
  const earnings = useLoad(() => api.GET('/v1/provider/earnings', { params: { query: { period: 'day', from } } }), []);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        Earnings (30 days)
      </Title>
      <Loadable loaded={earnings} isEmpty={(e) => e.groups.length === 0} empty="No earnings yet.">
        {(e) => {
          // Sum each day's groups (node × model × mode) exactly, then plot.
          const byDay = new Map<string, string>();
          for (const g of e.groups) byDay.set(g.period, add(byDay.get(g.period), g.net));
          const days = [...byDay.keys()].sort();
          return (
            <>
              <Group mb="xs">
                <Text>
                  Net {formatMoney(e.net, e.currency)} (gross {formatMoney(e.gross, e.currency)}, fee {formatMoney(e.platform_fee, e.currency)})
                </Text>
                <Text>Payable: {formatMoney(e.payable_balance, e.currency)}</Text>
              </Group>
              <TimeChart
                title="Net earnings by day"
                times={days.map((d) => Date.parse(d) / 1000)}
                series={[{ label: `Net (${e.currency})`, values: days.map((d) => toChartNumber(byDay.get(d))), color: '#2b8a3e', bars: true }]}
              />
            </>
          );
        }}
      </Loadable>
    </Card>
  );
}

function NewNode({ onCreated }: { onCreated: () => void }) {
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  const [name, setName] = useState('');
  const [region, setRegion] = useState<string | null>(null);
  const [model, setModel] = useState<string | null>(null);
  const [count, setCount] = useState<string | number>(8);
  const [mode, setMode] = useState<string | null>('whole');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<Schemas['CreatedNode'] | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const gpus = Array.from({ length: Math.max(Number(count) || 0, 0) }, () => ({
      model: model ?? '',
      mode: mode as Schemas['GpuMode'],
    }));
    const { data, error } = await api.POST('/v1/nodes', { body: { name, region: region ?? '', gpus } });
    setBusy(false);
    if (error || !data) setProblem(asProblem(error));
    else {
      setCreated(data);
      onCreated();
    }
  }

  return (
    <Card withBorder component="form" onSubmit={submit} aria-label="New node">
      <Title order={2} size="h4" mb="xs">
        New node
      </Title>
      {created ? (
        <Alert color="green" title={`Node ${created.name} created`} data-testid="node-token">
          <Text size="sm" mb="xs">
            Its token is shown only now. Start the agent on the GPU machine:
          </Text>
          <Code block>{`gpuex-agent --server ${window.location.origin} --token ${created.token} --backend nvml`}</Code>
          <Button mt="sm" variant="default" onClick={() => setCreated(null)}>
            Done
          </Button>
        </Alert>
      ) : (
        <Stack>
          <Group grow align="flex-start">
            <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} />
            <Select
              label="Region"
              data={(regions.data ?? []).map((r) => r.name)}
              value={region}
              onChange={setRegion}
              error={fieldError(problem, 'region')}
            />
          </Group>
          <Group grow align="flex-start">
            <Select
              label="GPU model"
              searchable
              data={(catalog.data ?? []).map((m) => m.name)}
              value={model}
              onChange={setModel}
              error={fieldError(problem, 'model')}
            />
            <NumberInput label="GPUs" min={1} max={16} value={count} onChange={setCount} error={fieldError(problem, 'gpus')} />
            <Select label="Sold as" data={['whole', 'mig', 'shared']} value={mode} onChange={setMode} error={fieldError(problem, 'mode')} />
          </Group>
          {problem && !problem.errors?.length && <ErrorNotice problem={problem} title="Refused" />}
          <Group>
            <Button type="submit" loading={busy}>
              Create node
            </Button>
          </Group>
        </Stack>
      )}
    </Card>
  );
}
