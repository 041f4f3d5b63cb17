import { Anchor, Button, Group, Select, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api/client';
import { Countdown, StateBadge } from '../components/LeaseBits';
import { DataTable } from '../components/DataTable';
import { Loadable } from '../components/States';
import { useEvents } from '../lib/events';
import { formatTime, MODE_LABELS, shortId } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';

type LeaseState = 'pending' | 'provisioning' | 'running' | 'preempting' | 'ended' | 'failed';

export function Leases() {
  const [state, setState] = useState<string | null>(null);
  const leases = useLoad(
    () => api.GET('/v1/leases', { params: { query: { limit: 200, ...(state ? { state: state as LeaseState } : {}) } } }),
    [state],
  );
  // Every lease and order event can change the list: read it again.
  useEvents((e) => {
    if (e.type.startsWith('lease.') || e.type.startsWith('order.')) leases.reload();
  });
  return (
    <>
      <Group justify="space-between" mb="md">
        <Title order={1} size="h2">
          Leases
        </Title>
        <Group>
          <Select
            aria-label="Filter by state"
            placeholder="Every state"
            clearable
            value={state}
            onChange={setState}
            data={['pending', 'provisioning', 'running', 'preempting', 'ended', 'failed']}
          />
          <Button component={Link} href="/buy">
            Buy capacity
          </Button>
        </Group>
      </Group>
      <Loadable loaded={leases} isEmpty={(d) => d.items.length === 0} empty="No leases yet: buy capacity to get one.">
        {(page) => (
          <DataTable
            striped
            highlightOnHover
            data-testid="lease-table"
            rows={page.items}
            rowKey={(l) => l.id}
            rowProps={(l) => ({ 'data-lease': l.id })}
            columns={[
              {
                header: 'Lease',
                cell: (l) => (
                  <Anchor component={Link} href={`/leases/${l.id}`} ff="monospace">
                    {shortId(l.id)}
                  </Anchor>
                ),
              },
              {
                header: 'State',
                cell: (l) => (
                  <Group gap="xs">
                    <StateBadge state={l.state} />
                    {l.preempt_at && l.state === 'preempting' && <Countdown to={l.preempt_at} label="ends in" />}
                    {l.rebalance_at && l.state === 'running' && !l.preempt_at && <span>rebalance warning</span>}
                  </Group>
                ),
              },
              { header: 'Mode', cell: (l) => MODE_LABELS[l.mode] ?? l.mode },
              { header: 'GPU', cell: (l) => l.gpu_model },
              { header: 'Region', cell: (l) => l.region },
              { header: 'Per hour', cell: (l) => formatMoney(l.price_per_hour) },
              { header: 'Charged', cell: (l) => formatMoney(l.usage.charged) },
              { header: 'Starts', cell: (l) => formatTime(l.starts_at) },
            ]}
          />
        )}
      </Loadable>
    </>
  );
}
