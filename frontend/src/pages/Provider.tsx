import { Alert, Anchor, Badge, Button, Card, Code, Group, NumberInput, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, type Schemas } from '../api/client';
import { TimeChart } from '../components/LazyChart';
import { DataTable } from '../components/DataTable';
import { ModelSelect, RegionSelect } from '../components/Pickers';
import { Section } from '../components/Section';
import { FormProblem, Loadable } from '../components/States';
import { useAction } from '../lib/action';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
import { add, formatMoney, toChartNumber } from '../lib/money';
import { fieldError } from '../lib/problem';
import { dayStartSeconds } from '../lib/time';

export function NodeStatusBadge({ node }: { node: Schemas['NodeSummary'] }) {
  const color = node.status === 'online' ? '#1b5e20' : '#a61e1e';
  return (
    <Group gap={4}>
      <Badge color={color}>{node.status}</Badge>
      {node.cordoned && <Badge color="#343a40">cordoned</Badge>}
      {node.quarantined && <Badge color="#a61e1e">quarantined</Badge>}
      {node.under_review && (
        <Badge color="#8a4b00" title={node.review_reason ?? undefined} data-testid="under-review">
          under review
        </Badge>
      )}
      {node.simulated && <Badge color="#495057">simulated</Badge>}
    </Group>
  );
}

export function Provider() {
  const nodes = useLoad(() => api.GET('/v1/nodes'), []);
  useEffect(() => {
    const t = setInterval(nodes.reload, 5000);
    return () => clearInterval(t);
  }, [nodes.reload]);
  const cordoning = useAction();

  async function cordon(id: string, cordoned: boolean) {
    await cordoning.run(() => api.POST('/v1/nodes/{id}/cordon', { params: { path: { id } }, body: { cordoned } }));
    nodes.reload();
  }

  const deleting = useAction();
  // Delete asks once more; a node with live leases is refused (409) and asks
  // again before ending them as on node loss.
  const [confirm, setConfirm] = useState<{ id: string; force: boolean } | null>(null);
  async function remove(id: string, force: boolean) {
    let hasLeases = false;
    const done = await deleting.run(async () => {
      const r = await api.DELETE('/v1/nodes/{id}', { params: { path: { id }, query: { force } } });
      hasLeases = r.response.status === 409;
      return r;
    });
    setConfirm(!done && hasLeases ? { id, force: true } : null);
    nodes.reload();
  }

  return (
    <Stack>
      <Title order={1} size="h2">
        Nodes
      </Title>
      <FormProblem problem={cordoning.problem} />
      <FormProblem problem={deleting.problem} />
      <Card withBorder>
        <Loadable loaded={nodes} isEmpty={(d) => d.length === 0} empty="No nodes yet: add one below and start its agent.">
          {(list) => (
            <DataTable
              data-testid="node-table"
              rows={list}
              rowKey={(n) => n.id}
              columns={[
                {
                  header: 'Node',
                  cell: (n) => (
                    <Anchor component={Link} href={`/provider/nodes/${n.id}`}>
                      {n.name}
                    </Anchor>
                  ),
                },
                { header: 'Region', cell: (n) => (n.zone ? `${n.region} / ${n.zone}` : n.region) },
                { header: 'Status', cell: (n) => <NodeStatusBadge node={n} /> },
                { header: 'GPUs', cell: (n) => n.gpu_count },
                { header: 'Last heartbeat', cell: (n) => formatTime(n.last_heartbeat_at) },
                {
                  header: 'Cordon',
                  cell: (n) => <Switch aria-label={`Cordon ${n.name}`} checked={n.cordoned} onChange={(e) => cordon(n.id, e.currentTarget.checked)} />,
                },
                {
                  header: 'Delete',
                  cell: (n) =>
                    confirm?.id === n.id ? (
                      <Group gap="xs" wrap="nowrap">
                        <Button
                          size="xs"
                          color="red"
                          loading={deleting.busy}
                          onClick={() => void remove(n.id, confirm.force)}
                          aria-label={confirm.force ? `End its leases and delete ${n.name}` : `Yes, delete ${n.name}`}
                        >
                          {confirm.force ? 'End its leases and delete' : 'Yes, delete'}
                        </Button>
                        <Button size="xs" variant="default" onClick={() => setConfirm(null)}>
                          Cancel
                        </Button>
                      </Group>
                    ) : (
                      <Button size="xs" color="red" variant="outline" onClick={() => setConfirm({ id: n.id, force: false })} aria-label={`Delete ${n.name}`}>
                        Delete
                      </Button>
                    ),
                },
              ]}
            />
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
    <Section title="Earnings (30 days)">
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
                days
                times={days.map(dayStartSeconds)}
                series={[{ label: `Net (${e.currency})`, values: days.map((d) => toChartNumber(byDay.get(d))), color: '#2b8a3e', bars: true }]}
              />
            </>
          );
        }}
      </Loadable>
    </Section>
  );
}

function NewNode({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [region, setRegion] = useState<string | null>(null);
  const [zone, setZone] = useState('');
  const [model, setModel] = useState<string | null>(null);
  const [count, setCount] = useState<string | number>(8);
  const [mode, setMode] = useState<string | null>('whole');
  const [created, setCreated] = useState<Schemas['CreatedNode'] | null>(null);
  const { busy, problem, run } = useAction();

  async function submit(e: FormEvent) {
    e.preventDefault();
    const gpus = Array.from({ length: Math.max(Number(count) || 0, 0) }, () => ({
      model: model ?? '',
      mode: mode as Schemas['GpuMode'],
    }));
    const r = await run(() => api.POST('/v1/nodes', { body: { name, region: region ?? '', ...(zone.trim() ? { zone: zone.trim() } : {}), gpus } }));
    if (r?.data) {
      setCreated(r.data);
      onCreated();
    }
  }

  return (
    <Section title="New node">
      <form onSubmit={submit} aria-label="New node">
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
            <RegionSelect value={region} onChange={setRegion} error={fieldError(problem, 'region')} />
            <TextInput
              label="Zone"
              description="Its failure domain (rack, building); optional"
              value={zone}
              onChange={(e) => setZone(e.currentTarget.value)}
              error={fieldError(problem, 'zone')}
            />
          </Group>
          <Group grow align="flex-start">
            <ModelSelect value={model} onChange={setModel} error={fieldError(problem, 'model')} />
            <NumberInput label="GPUs" min={1} max={16} value={count} onChange={setCount} error={fieldError(problem, 'gpus')} />
            <Select label="Sold as" data={['whole', 'mig', 'shared']} value={mode} onChange={setMode} error={fieldError(problem, 'mode')} />
          </Group>
          <FormProblem problem={problem} />
          <Group>
            <Button type="submit" loading={busy}>
              Create node
            </Button>
          </Group>
        </Stack>
      )}
      </form>
    </Section>
  );
}
