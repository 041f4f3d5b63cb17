import { Select } from '@mantine/core';
import { api, type Schemas } from '../api/client';
import { useLoad } from '../lib/load';
import type { Column } from './DataTable';
import { UNIT_LABELS } from '../lib/format';
import { formatUnitPrice } from '../lib/money';

interface PickerProps {
  value: string | null;
  onChange: (value: string | null) => void;
  error?: string;
  /** In place of the picker's own label ("GPU model", "Region"). */
  label?: string;
  description?: string;
  placeholder?: string;
  clearable?: boolean;
}

/** A region from `/v1/regions`, for the forms that name one. */
export function RegionSelect(props: PickerProps) {
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  return <Select label="Region" data={(regions.data ?? []).map((r) => r.name)} {...props} />;
}

/** A GPU model from the catalog. */
export function ModelSelect({ label = 'GPU model', ...props }: PickerProps) {
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  // Mantine's clear button has no name of its own.
  return <Select label={label} searchable data={(catalog.data ?? []).map((m) => m.name)} clearButtonProps={{ 'aria-label': `Clear ${label}` }} {...props} />;
}

type Price = Schemas['PriceView'];

/** A list price's identity: one per region, model and unit. */
export const priceKey = (p: Price) => `${p.region}|${p.gpu_model}|${p.unit}`;

/** The columns every list-price table starts with. */
export const PRICE_COLUMNS: Column<Price>[] = [
  { header: 'Region', cell: (p) => p.region },
  { header: 'GPU', cell: (p) => p.gpu_model },
  { header: 'Per', cell: (p) => UNIT_LABELS[p.unit] ?? p.unit },
  { header: 'List', cell: (p) => formatUnitPrice(p.list, p.currency) },
];
