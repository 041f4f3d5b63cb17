import { Anchor, Card, Group, Progress, Stack, Text, Title } from '@mantine/core';
import { useEffect } from 'react';
import { Link } from 'wouter';
import { api, type Schemas } from '../api/client';
import { Loadable } from '../components/States';
import { formatTime, shortId } from '../lib/format';
import { useLoad } from '../lib/load';
import { migCells, sharedCells, type Cell, type ProfileLike } from '../lib/slots';
import { NodeStatusBadge } from './Provider';

function utilization(gpu: Schemas['GpuView']): number | null {
  const fields = (gpu.metrics as { fields?: Record<string, number> } | null)?.fields;
  const u = fields?.DCGM_FI_DEV_GPU_UTIL;
  return typeof u === 'number' ? u : null;
}

function Slots({ gpu, cells, total }: { gpu: number; cells: Cell[]; total: number }) {
  return (
    <div className="slot-row" role="list" aria-label={`GPU ${gpu} slices`}>
      {cells.map((c) => (
        <div
          key={c.start}
          role="listitem"
          className="slot"
          style={{ flexGrow: c.size / total }}
          data-gpu={gpu}
          data-start={c.start}
          data-held={c.leaseId !== null}
          data-lease={c.leaseId ?? ''}
          title={c.leaseId ? `${c.label}: lease ${c.leaseId}` : 'free'}
        >
          {c.leaseId ? shortId(c.leaseId) : c.label === 'free' ? '' : c.label}
          <span className="sr-only" style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' }}>
            {c.leaseId ? ` ${c.label} held by lease ${c.leaseId}` : ' free'}
          </span>
        </div>
      ))}
    </div>
  );
}

function Gpu({ gpu, profiles }: { gpu: Schemas['GpuView']; profiles: ProfileLike[] }) {
  const util = utilization(gpu);
  let slots;
  if (gpu.mode === 'mig') {
    const cells = migCells(gpu.slices, profiles);
    slots = <Slots gpu={gpu.index} cells={cells} total={cells.reduce((n, c) => n + c.size, 0)} />;
  } else if (gpu.mode === 'shared') {
    slots = <Slots gpu={gpu.index} cells={sharedCells(gpu.slices)} total={1000} />;
  } else {
    const holder = gpu.slices[0];
    slots = (
      <Slots gpu={gpu.index} cells={[{ start: 0, size: 1, leaseId: holder?.lease_id ?? null, label: holder ? 'whole' : 'free' }]} total={1} />
    );
  }
  return (
    <Card withBorder padding="sm" data-testid={`gpu-${gpu.index}`}>
      <Group justify="space-between" mb={4}>
        <Text fw={600}>GPU {gpu.index}</Text>
        <Text size="sm">
          {gpu.mode} · {gpu.model}
        </Text>
      </Group>
      {slots}
      <Text size="xs" mt={6}>
        Utilization {util === null ? '—' : `${util.toFixed(0)} %`}
      </Text>
      <Progress value={util ?? 0} size="sm" aria-label={`GPU ${gpu.index} utilization`} color="blue.8" />
      {gpu.slices.length > 0 && (
        <Text size="xs" mt={4}>
          {gpu.slices.map((s) => `${shortId(s.lease_id)} ${s.state}`).join(', ')}
        </Text>
      )}
    </Card>
  );
}

export function NodePage({ id }: { id: string }) {
  const node = useLoad(() => api.GET('/v1/nodes/{id}', { params: { path: { id } } }), [id]);
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  // Heartbeats come every few seconds; so does this page.
  useEffect(() => {
    const t = setInterval(node.reload, 3000);
    return () => clearInterval(t);
  }, [node.reload]);
  return (
    <Stack>
      <Anchor component={Link} href="/provider">
        ← Nodes
      </Anchor>
      <Loadable loaded={node}>
        {(n) => (
          <>
            <Group>
              <Title order={1} size="h2">
                {n.name}
              </Title>
              <NodeStatusBadge node={n} />
            </Group>
            <Text size="sm">
              {n.region}
              {n.zone ? ` / ${n.zone}` : ''} · {n.hostname ?? 'not registered'} · agent {n.agent_version ?? '—'} ({n.backend ?? '—'}) · last heartbeat{' '}
              {formatTime(n.last_heartbeat_at)}
            </Text>
            <div className="gpu-grid" data-testid="gpus">
              {n.gpus.map((g) => (
                <Gpu key={g.index} gpu={g} profiles={catalog.data?.find((m) => m.name === g.model)?.mig_profiles ?? []} />
              ))}
            </div>
          </>
        )}
      </Loadable>
    </Stack>
  );
}
