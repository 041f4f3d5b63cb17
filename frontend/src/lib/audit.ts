// The admin audit log for people: each action's target and recorded details
// as a short sentence instead of raw JSON. Pure, so it is tested without a
// browser.
import { formatMoney, formatUnitPrice } from './money';
import { UNIT_LABELS } from './format';

export const ACTION_LABELS: Record<string, string> = {
  set_price: 'Set list price',
  put_region: 'Set region',
  credit: 'Credit',
  billing_adjustment: 'Billing adjustment',
  cordon_node: 'Cordon node',
  uncordon_node: 'Uncordon node',
  delete_node: 'Delete node',
  set_role: 'Set role',
  set_node: 'Set node',
};

export interface AuditLike {
  action: string;
  target: string;
  details: unknown;
}

/** `price:eu-west:H100-SXM5-80GB:tflops_h` → `eu-west · H100-SXM5-80GB · TFLOPS-hour`; `user:<id>` → `user <id>`. */
export function auditTarget(target: string): string {
  const [kind, ...rest] = target.split(':');
  if (kind === 'price' && rest.length === 3) {
    const [region, model, unit] = rest;
    return `${region} · ${model} · ${UNIT_LABELS[unit] ?? unit}`;
  }
  if (rest.length === 0) return target;
  return `${kind} ${rest.join(':')}`;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);

/** The recorded change as one line. Unknown shapes fall back to `key: value` pairs. */
export function auditDetails(entry: AuditLike): string {
  const d = entry.details && typeof entry.details === 'object' ? (entry.details as Record<string, unknown>) : null;
  if (!d) return typeof entry.details === 'string' ? entry.details : '';
  switch (entry.action) {
    case 'set_price': {
      const now = text(d.list_price);
      const was = text(d.previous);
      if (now) return `${formatUnitPrice(now)}${was ? ` (was ${formatUnitPrice(was)})` : ' (new)'}`;
      break;
    }
    case 'put_region':
      if (text(d.timezone)) return `time zone ${d.timezone}`;
      break;
    case 'credit':
    case 'billing_adjustment': {
      const amount = text(d.amount);
      const why = text(d.memo) ?? text(d.reason);
      if (amount) return `${formatMoney(amount)}${why ? `: ${why}` : ''}`;
      break;
    }
    case 'cordon_node':
    case 'uncordon_node':
      return `${d.cordoned ? 'cordoned' : 'uncordoned'}${d.was_quarantined ? ' (was quarantined)' : ''}`;
  }
  return Object.entries(d)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}
