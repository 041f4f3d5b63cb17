import { Alert, Anchor, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { api, type Schemas } from '../api/client';
import { useEvents } from '../lib/events';
import { formatTime, shortId } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';
import { orderTypeText } from '../lib/orderType';
import { DataTable } from './DataTable';
import { Section } from './Section';
import { Loadable } from './States';

type Order = Schemas['OrderView'];
type Fill = Schemas['FillView'];
/** What a fill report says that the table shows (the report is free-form JSON). */
type ReportLike = { price_per_hour?: string; explanation?: string };

/**
 * The order a lease belongs to: its other attempts, its other units (an
 * order of `count` units holds several leases), and how each fill was
 * matched, with the order's type. `children` (the lease's actions) go
 * between the notices and the fills.
 */
export function OrderOfLease({ orderId, leaseId, children }: { orderId: string; leaseId: string; children?: ReactNode }) {
  const order = useLoad(() => api.GET('/v1/orders/{id}', { params: { path: { id: orderId } } }), [orderId]);
  const fills = useLoad(() => api.GET('/v1/orders/{id}/fills', { params: { path: { id: orderId } } }), [orderId]);
  useEvents((e) => {
    if (e.order_id === orderId) {
      order.reload();
      fills.reload();
    }
  });
  const o = order.data;
  return (
    <>
      {o && <Attempts order={o} leaseId={leaseId} />}
      {o && o.lease_ids.length > 1 && <Units order={o} leaseId={leaseId} />}
      {children}
      <Section
        title="Order and fills"
        data-testid="order"
        aside={
          o && (
            <Text size="sm" data-testid="order-state">
              Order <span style={{ fontFamily: 'monospace' }}>{shortId(o.id)}</span> · {o.state}
            </Text>
          )
        }
      >
        <Loadable loaded={fills} isEmpty={(d) => d.length === 0} empty="No fills yet.">
          {(rows) => <Fills rows={rows} leaseId={leaseId} />}
        </Loadable>
      </Section>
    </>
  );
}

function LeaseLink({ id, current }: { id: string; current: string }) {
  return (
    // blue.9: AA contrast on an alert's light blue too.
    <Anchor component={Link} href={`/leases/${id}`} ff="monospace" c="blue.9" fw={id === current ? 700 : undefined} aria-current={id === current ? 'page' : undefined}>
      {shortId(id)}
    </Anchor>
  );
}

/** The units of an order of several: each its own lease, this one marked. */
function Units({ order: o, leaseId }: { order: Order; leaseId: string }) {
  const nth = o.lease_ids.indexOf(leaseId) + 1;
  return (
    <Alert color="blue" title={nth > 0 ? `Unit ${nth} of ${o.lease_ids.length}` : `${o.lease_ids.length} units`} data-testid="order-leases">
      <Text size="sm">
        The order holds {o.lease_ids.length} leases, one per unit:{' '}
        {o.lease_ids.map((id, i) => (
          <span key={id}>
            {i > 0 && ', '}
            <LeaseLink id={id} current={leaseId} />
          </span>
        ))}
      </Text>
    </Alert>
  );
}

/** The order's other leases, when it was placed again after a preemption or
 * a lost node, and the checkpoint this one resumed from. */
function Attempts({ order: o, leaseId }: { order: Order; leaseId: string }) {
  // Every unit of an order of several is an attempt too: more than those is a placing again.
  if (o.attempts.length <= Math.max(1, o.lease_ids.length)) return null;
  const nth = o.attempts.indexOf(leaseId) + 1;
  const resumed = o.resumed_from && o.resumed_from.lease_id === leaseId ? o.resumed_from : null;
  return (
    <Alert color="blue" title={`Attempt ${nth} of ${o.attempts.length}`} data-testid="attempts">
      <Stack gap={4}>
        <Text size="sm">
          The order was placed again after an interruption:{' '}
          {o.attempts.map((id, i) => (
            <span key={id}>
              {i > 0 && ' → '}
              {id === leaseId ? (
                <code>{shortId(id)}</code>
              ) : (
                <Anchor component={Link} href={`/leases/${id}`} c="blue.9">
                  {shortId(id)}
                </Anchor>
              )}
            </span>
          ))}
        </Text>
        {resumed && (
          <Text size="sm">
            Resumed from checkpoint #{resumed.seq}, stored {formatTime(resumed.stored_at)}.
          </Text>
        )}
      </Stack>
    </Alert>
  );
}

function Fills({ rows, leaseId }: { rows: Fill[]; leaseId: string }) {
  return (
    <DataTable
      data-testid="fills"
      rows={rows}
      rowKey={(f) => f.lease_id}
      rowProps={(f) => ({ 'data-lease': f.lease_id })}
      columns={[
        { header: 'Lease', cell: (f) => <LeaseLink id={f.lease_id} current={leaseId} /> },
        { header: 'Order type', cell: (f) => <span data-testid="fill-order-type" className="nowrap">{orderTypeText(f.order_type, formatTime)}</span> },
        { header: 'Per hour', cell: (f) => formatMoney((f.report as ReportLike).price_per_hour) },
        {
          header: 'Why',
          cell: (f) => (
            <Text size="xs" c="dimmed">
              {(f.report as ReportLike).explanation ?? '—'}
            </Text>
          ),
        },
        { header: 'Filled', cell: (f) => formatTime(f.created_at) },
      ]}
    />
  );
}
