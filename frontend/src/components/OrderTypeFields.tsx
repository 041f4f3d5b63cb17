import { Checkbox, Fieldset, Group, NumberInput, Select, TextInput } from '@mantine/core';
import { fieldError, type Problem } from '../lib/problem';
import {
  effective,
  isoToLocal,
  MAX_COUNT,
  MAX_GTT_MS,
  TIF_HELP,
  TIF_LABELS,
  takesCount,
  takesMinCount,
  tifsFor,
  type OrderTypeForm,
  type TimeInForce,
} from '../lib/orderType';

type Mode = 'on_demand' | 'reserved' | 'spot' | 'pooled';

/** The fields these inputs claim, for the form's list of unclaimed errors. */
export const ORDER_TYPE_FIELDS = ['time_in_force', 'expires_at', 'count', 'all_or_none', 'min_count'];

/**
 * The buy form's order type: how long the order stands and how many
 * identical units it asks for. Spot bids take neither (they stay in the
 * auction until cancelled, one unit each): nothing is shown for them.
 */
export function OrderTypeFields({
  mode,
  value,
  onChange,
  problem,
}: {
  mode: Mode;
  value: OrderTypeForm;
  onChange: (next: OrderTypeForm) => void;
  problem: Problem | null;
}) {
  const tifs = tifsFor(mode);
  if (tifs.length === 0 && !takesCount(mode)) return null;
  const form = effective(mode, value);
  const set = (patch: Partial<OrderTypeForm>) => onChange({ ...value, ...patch });
  const chooseTif = (tif: string | null) => {
    const next = (tif as TimeInForce | null) ?? null;
    // A good-till-time order starts an hour from now, which the buyer moves.
    set(next === 'gtt' && !value.expiresAt ? { tif: next, expiresAt: isoToLocal(Date.now() + 3600_000) } : { tif: next });
  };
  const now = Date.now();
  return (
    <Fieldset legend="Order type" data-testid="order-type">
      <Group grow align="flex-start">
        <Select
          label="Time in force"
          placeholder={mode === 'pooled' ? 'Wait up to the seconds given' : 'Immediate or cancel'}
          description={form.tif ? TIF_HELP[form.tif] : mode === 'pooled' ? 'None chosen: the wait below' : TIF_HELP.ioc}
          clearable
          data={tifs.map((t) => ({ value: t, label: TIF_LABELS[t] }))}
          value={form.tif}
          onChange={chooseTif}
          error={fieldError(problem, 'time_in_force')}
        />
        {form.tif === 'gtt' && (
          <TextInput
            type="datetime-local"
            label="Expires at"
            description="Your local time, within 7 days"
            min={isoToLocal(now)}
            max={isoToLocal(now + MAX_GTT_MS)}
            value={value.expiresAt}
            onChange={(e) => set({ expiresAt: e.currentTarget.value })}
            error={fieldError(problem, 'expires_at')}
          />
        )}
      </Group>
      {takesCount(mode) && (
        <Group grow align="flex-start" mt="sm">
          <NumberInput
            label="Units"
            description="Identical units, each its own lease"
            placeholder="1"
            min={1}
            max={MAX_COUNT}
            allowDecimal={false}
            value={value.count}
            onChange={(count) => set({ count })}
            error={fieldError(problem, 'count')}
          />
          <NumberInput
            label="At least"
            description={takesMinCount(form) ? 'The fewest units worth placing' : 'Every unit or none'}
            placeholder={takesMinCount(form) ? '1' : 'All'}
            min={1}
            max={MAX_COUNT}
            allowDecimal={false}
            disabled={!takesMinCount(form)}
            value={takesMinCount(form) ? value.minCount : ''}
            onChange={(minCount) => set({ minCount })}
            error={fieldError(problem, 'min_count')}
          />
          <Checkbox
            label="All or none"
            description="Every unit placed together, or none"
            checked={value.allOrNone}
            onChange={(e) => set({ allOrNone: e.currentTarget.checked })}
            error={fieldError(problem, 'all_or_none')}
            mt={24}
          />
        </Group>
      )}
    </Fieldset>
  );
}
