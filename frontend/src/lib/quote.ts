// What the buy form shows from a quote. Pure, so the arithmetic is tested
// without a browser; every amount stays a decimal string.
import { add, compare, formatQuantity, multiply, saving } from './money';
import { MODE_LABELS } from './format';

export interface QuoteLineLike {
  unit: string;
  quantity: string;
  unit_price: string;
}
export interface QuoteOptionLike {
  gpu_model: string;
  region: string;
  price_per_hour: string;
  breakdown: QuoteLineLike[];
}
export interface SliceLike {
  gpu_model: string;
  region: string;
  node_id: string;
  placement: Record<string, unknown>;
  units: Record<string, unknown>;
  price_per_hour: string;
  source: string;
  listing_id?: string | null;
  primary_price_per_hour?: string | null;
  saving_per_hour?: string | null;
  /** Whether the request's max_price is below this price (the order would be refused, or wait). */
  max_price_binds?: boolean;
}
export interface GpuModelLike {
  name: string;
  tflops_units: string;
  vram_units: string;
}

export interface QuoteSummary {
  gpuModel: string;
  region: string;
  pricePerHour: string;
  /** Units the slice holds per hour (what is charged): TFLOPS-hours and 4 GB VRAM-hours. */
  held: { tflops: string; vram: string } | null;
  /** Units asked for; a MIG profile or whole GPU can hold more. */
  asked: { tflops: string; vram: string } | null;
  source: 'primary' | 'resale' | 'estimate';
  /** The primary price a cheaper resale listing beats, and by how much. */
  resale: { listingId: string | null; primary: string | null; saving: string | null } | null;
  /** The price of renting a whole 8-GPU node of this model in this mode, per hour. */
  wholeNodePerHour: string | null;
  wholeNodeSaving: { amount: string; percent: string } | null;
  /** The max price asked is below the price: an order would be refused (or wait with a max wait). */
  maxPriceBinds: boolean;
}

export const GPUS_PER_NODE = 8;

/** A whole node's price per hour: 8 GPUs × (their TFLOPS units × unit price + VRAM units × unit price). */
export function wholeNodePrice(option: QuoteOptionLike, model: GpuModelLike | undefined): string | null {
  if (!model) return null;
  const price = (unit: string) => option.breakdown.find((b) => b.unit === unit)?.unit_price;
  const tflops = price('tflops_h');
  const vram = price('vram_h');
  if (!tflops || !vram) return null;
  const perGpu = add(multiply(model.tflops_units, tflops), multiply(model.vram_units, vram));
  return multiply(perGpu, String(GPUS_PER_NODE));
}

export function summarize(
  quote: { options: QuoteOptionLike[]; slice?: SliceLike | null },
  catalog: GpuModelLike[],
): QuoteSummary | null {
  const slice = quote.slice ?? null;
  const option = slice
    ? (quote.options.find((o) => o.gpu_model === slice.gpu_model && o.region === slice.region) ?? quote.options[0])
    : quote.options[0];
  if (!option && !slice) return null;
  const gpuModel = slice?.gpu_model ?? option.gpu_model;
  const model = catalog.find((m) => m.name === gpuModel);
  const pricePerHour = slice?.price_per_hour ?? option.price_per_hour;
  const whole = option ? wholeNodePrice(option, model) : null;
  const units = (slice?.units ?? {}) as Record<string, { tflops_h?: unknown; vram_h?: unknown } | undefined>;
  const pair = (u: { tflops_h?: unknown; vram_h?: unknown } | undefined) =>
    u && u.tflops_h !== undefined && u.vram_h !== undefined ? { tflops: String(u.tflops_h), vram: String(u.vram_h) } : null;
  return {
    gpuModel,
    region: slice?.region ?? option.region,
    pricePerHour,
    held: pair(units.held),
    asked: pair(units.asked),
    source: slice ? (slice.source === 'resale' ? 'resale' : 'primary') : 'estimate',
    resale:
      slice && slice.source === 'resale'
        ? { listingId: slice.listing_id ?? null, primary: slice.primary_price_per_hour ?? null, saving: slice.saving_per_hour ?? null }
        : null,
    wholeNodePerHour: whole,
    wholeNodeSaving: saving(pricePerHour, whole),
    maxPriceBinds: slice?.max_price_binds === true,
  };
}

/** GB of GPU memory per VRAM unit: the API counts memory in 4 GB units. */
export const GB_PER_VRAM_UNIT = '4';

/** Units per hour as people read them: "100 TFLOPS and 16 GB" (16 GB is 4 units of 4 GB), not "4 VRAM-h (4 GB)". */
export function unitsText(units: { tflops: string; vram: string }): string {
  return `${formatQuantity(units.tflops)} TFLOPS and ${formatQuantity(multiply(units.vram, GB_PER_VRAM_UNIT))} GB`;
}

/** What the quote's slice holds per hour, and what was asked when the slice rounds up. */
export function heldText(summary: Pick<QuoteSummary, 'held' | 'asked'>): string {
  const held = summary.held;
  if (!held) return '';
  const text = `Holds ${unitsText(held)} of GPU memory (${formatQuantity(held.vram)} × 4 GB VRAM units) per hour`;
  const asked = summary.asked;
  const roundsUp = asked && (compare(asked.tflops, held.tflops) !== 0 || compare(asked.vram, held.vram) !== 0);
  return roundsUp ? `${text}; you asked for ${unitsText(asked)}: the slice rounds up.` : `${text}.`;
}

/** The pricing rule the server states ("on_demand: 1.8 × list price") with the mode named as the form names it. */
export function ruleText(rule: string): string {
  return rule.replace(/^(on_demand|reserved|spot|pooled):/, (_m, mode: string) => `${MODE_LABELS[mode]}:`);
}
