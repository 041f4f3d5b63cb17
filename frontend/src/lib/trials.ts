// Trials (`/v1/trials`): one short on-demand run of a command per shape, to
// find the smallest (cheapest) slice a workload runs on before buying. The
// shapes a model offers, the request a form sends, the problem's fields as
// the form's inputs, and a run's figures for people.
import Decimal from 'decimal.js-light';
import type { Schemas } from '../api/client';
import { formatMoney } from './money';
import type { Problem } from './problem';

type Model = Pick<Schemas['GpuModelView'], 'name' | 'memory_gb' | 'mig_capable' | 'mig_profiles'>;
type TrialView = Schemas['TrialView'];

export const DEFAULT_DURATION_S = 300;
export const MIN_DURATION_S = 60;
export const MAX_DURATION_S = 600;
export const MAX_SHAPES = 8;
/** Soft shares offered beside a model's MIG profiles, in thousandths of the GPU. */
export const SHARES = [250, 500];

export interface ShapeOption {
  /** As the API names it: `mig-1g.10gb`, `shared-250`, `whole`. */
  value: string;
  /** For people: what the shape holds. */
  description: string;
}

/** The shapes a catalog model can be tried on: its MIG profiles (smallest first), soft shares, the whole GPU. */
export function shapeOptions(model: Model | undefined): ShapeOption[] {
  if (!model) return [];
  const mig = model.mig_capable
    ? [...model.mig_profiles]
        .sort((a, b) => a.compute_slices - b.compute_slices || a.memory_gb - b.memory_gb)
        .map((p) => ({ value: `mig-${p.name}`, description: `MIG, ${p.compute_slices}/7 compute, ${p.memory_gb} GB` }))
    : [];
  const shared = SHARES.map((milli) => ({
    value: `shared-${milli}`,
    description: `${milli / 10} % share, ${Math.floor((model.memory_gb * milli) / 1000)} GB`,
  }));
  return [...mig, ...shared, { value: 'whole', description: `the whole GPU, ${model.memory_gb} GB` }];
}

export interface TrialForm {
  gpuModel: string | null;
  shapes: string[];
  command: string;
  durationS: string | number;
  region: string | null;
  image: string;
  env: string;
}

export const EMPTY_TRIAL_FORM: TrialForm = {
  gpuModel: null,
  shapes: [],
  command: '',
  durationS: DEFAULT_DURATION_S,
  region: null,
  image: '',
  env: '',
};

/** `NAME=value` lines (blank ones skipped); null when there are none. */
export function parseEnv(text: string): Record<string, string> | null {
  const pairs = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const at = l.indexOf('=');
      return at < 0 ? [l, ''] : [l.slice(0, at).trim(), l.slice(at + 1)];
    });
  return pairs.length ? Object.fromEntries(pairs) : null;
}

/**
 * The request body: only what the form filled in, so the server's defaults
 * (300 s, any region) apply. Left for the server to judge: an empty model,
 * no shape or a duration out of range come back as its field errors.
 */
export function trialRequest(form: TrialForm): Schemas['TrialRequest'] {
  const duration = form.durationS === '' ? null : Number(form.durationS);
  const env = parseEnv(form.env);
  return {
    gpu_model: form.gpuModel ?? '',
    shapes: form.shapes,
    command: form.command,
    ...(duration !== null && Number.isFinite(duration) ? { duration_s: duration } : {}),
    ...(form.region && form.region !== 'any' ? { region: form.region } : {}),
    ...(form.image.trim() ? { image: form.image.trim() } : {}),
    ...(env ? { env } : {}),
  };
}

/** The form's inputs that a problem's `errors[].field` can name. */
export type TrialInput = 'gpu_model' | 'shapes' | 'command' | 'duration_s' | 'region' | 'image' | 'env';
const INPUTS: TrialInput[] = ['gpu_model', 'shapes', 'command', 'duration_s', 'region', 'image', 'env'];

/** Which input a field error belongs under: `shapes[1]` under the shapes, `env.HOME` under the environment. */
export function inputOf(field: string): TrialInput | null {
  const bare = field.replace(/^body\./, '');
  return INPUTS.find((i) => bare === i || bare.startsWith(`${i}[`) || bare.startsWith(`${i}.`)) ?? null;
}

export interface TrialErrors {
  /** Each input's messages, joined. */
  byInput: Partial<Record<TrialInput, string>>;
  /** Errors no input claims, so none is lost. */
  rest: { field: string; message: string }[];
}

/**
 * A refusal's field errors under the form's inputs. A shape's error names
 * its index (`shapes[1]`): it is shown with the shape (`mig-9g.90gb: …`),
 * and an environment variable's with its name.
 */
export function trialErrors(problem: Problem | null | undefined, shapes: string[]): TrialErrors {
  const byInput: Partial<Record<TrialInput, string>> = {};
  const rest: TrialErrors['rest'] = [];
  for (const e of problem?.errors ?? []) {
    const input = inputOf(e.field);
    if (!input) {
      rest.push(e);
      continue;
    }
    const bare = e.field.replace(/^body\./, '');
    let message = e.message;
    const index = /^shapes\[(\d+)\]$/.exec(bare);
    if (index) message = `${shapes[Number(index[1])] ?? bare}: ${e.message}`;
    else if (bare.startsWith('env.')) message = `${bare.slice(4)}: ${e.message}`;
    byInput[input] = byInput[input] ? `${byInput[input]}; ${message}` : message;
  }
  return { byInput, rest };
}

/** A median utilization (`"0.42"`, 0–1) as a percentage ("42 %"); "—" when there is none. */
export function utilizationText(p50: string | null | undefined): string {
  if (p50 === null || p50 === undefined || p50.trim() === '') return '—';
  try {
    const pct = new Decimal(p50.trim()).times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_EVEN);
    return `${pct.toFixed()} %`;
  } catch {
    return '—';
  }
}

/** Peak memory in MB for people: "812 MB", "12.3 GB" from a thousand MB on. */
export function memoryText(mb: number | null | undefined): string {
  if (mb === null || mb === undefined) return '—';
  if (mb < 1000) return `${mb} MB`;
  return `${new Decimal(mb).div(1000).toDecimalPlaces(1, Decimal.ROUND_HALF_EVEN).toFixed()} GB`;
}

/** The trial's answer in a sentence. */
export function verdictText(trial: Pick<TrialView, 'state' | 'smallest_passed' | 'runs'>): string {
  if (trial.smallest_passed) {
    return `Smallest that passed: ${trial.smallest_passed.shape} at ${formatMoney(trial.smallest_passed.price_per_hour)}/h`;
  }
  if (trial.state === 'running') {
    const left = trial.runs.filter((r) => r.state === 'pending' || r.state === 'running').length;
    return `Running: ${left} of ${trial.runs.length} shapes still to finish.`;
  }
  return 'No shape passed: the command failed or was refused on every shape tried.';
}

/** How many of the runs passed, as "1 of 2 passed". */
export function passedText(trial: Pick<TrialView, 'runs'>): string {
  return `${trial.runs.filter((r) => r.state === 'passed').length} of ${trial.runs.length} passed`;
}

/** Whether the trial still changes (and its page polls it). */
export const isLive = (trial: Pick<TrialView, 'state'> | undefined): boolean => trial?.state === 'running';
