// The Capacity page's job-history imports: the formats a file comes in, the
// query its upload sends, what the server answered in words, and the
// concurrency series as the chart draws it. The file itself is never read
// here: the browser streams it from disk as the request's body.
import type { Schemas } from '../api/client';
import { formatTime } from './format';
import { toChartNumber } from './money';
import { toSeconds } from './time';

export type ImportFormat = Schemas['ImportFormat'];

export const IMPORT_FORMATS: { value: ImportFormat; label: string }[] = [
  { value: 'slurm', label: 'Slurm (sacct --parsable2)' },
  { value: 'k8s', label: 'Kubernetes (kubectl get pods -o json)' },
  { value: 'csv', label: 'CSV (start,end,gpus[,gpu_model][,tag])' },
];

export const FORMAT_LABELS: Record<ImportFormat, string> = { slurm: 'Slurm', k8s: 'Kubernetes', csv: 'CSV' };

/** The format a file's name suggests (`.json` is kubectl's, `.csv` a spreadsheet's); null when it says nothing. */
export function guessFormat(name: string): ImportFormat | null {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
  if (ext === 'json') return 'k8s';
  if (ext === 'csv') return 'csv';
  return null;
}

/** The upload's query: the default model only when one was chosen (the server's is H100-SXM5-80GB). */
export function importQuery(format: ImportFormat, gpuModel: string | null): { format: ImportFormat; gpu_model?: string } {
  return gpuModel ? { format, gpu_model: gpuModel } : { format };
}

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** "3 jobs taken, 4 rows skipped, 2 refused": what an import made of its file. */
export function importSummary(i: Schemas['ProfileImport']): string {
  return `${count(i.rows, 'job', 'jobs')} taken, ${count(i.skipped, 'row', 'rows')} skipped (no GPU held), ${count(i.rejected_count, 'row', 'rows')} refused`;
}

/** "1 job named no GPU model the catalog knows and is priced as H100-SXM5-80GB." */
export function defaultedNote(i: Pick<Schemas['ProfileImport'], 'defaulted_model_rows' | 'default_gpu_model'>): string {
  const n = i.defaulted_model_rows;
  return `${count(n, 'job', 'jobs')} named no GPU model the catalog knows and ${n === 1 ? 'is' : 'are'} priced as ${i.default_gpu_model}.`;
}

/** The note on the refused rows listed: all of them, or the first ones the server kept. */
export function rejectedNote(i: Schemas['ProfileImport']): string | null {
  if (i.rejected_count === 0) return null;
  if (i.rejected.length < i.rejected_count) return `The first ${i.rejected.length} of ${i.rejected_count.toLocaleString('en-US')} refused rows:`;
  return i.rejected_count === 1 ? 'The refused row:' : 'The refused rows:';
}

/** The first job's start to the last job's end; "—" with no job. */
export function importWindow(i: Pick<Schemas['ProfileImport'], 'from' | 'to'>): string {
  return i.from && i.to ? `${formatTime(i.from)} – ${formatTime(i.to)}` : '—';
}

export interface ConcurrencyChart {
  /** Unix seconds: each stretch's start, then the last one's end. */
  times: number[];
  mean: number[];
  peak: number[];
  span: [number, number];
}

/**
 * GPUs held over an import's window, as the chart draws it: each stretch at
 * its start, and the last stretch again at its end so the window is drawn
 * to its last second. Null with no stretch.
 */
export function concurrencyChart(points: readonly Schemas['ConcurrencyPoint'][]): ConcurrencyChart | null {
  if (points.length === 0) return null;
  const last = points[points.length - 1];
  const times = [...points.map((p) => toSeconds(p.from)), toSeconds(last.to)];
  const mean = [...points.map((p) => toChartNumber(p.mean_gpus)), toChartNumber(last.mean_gpus)];
  const peak = [...points.map((p) => toChartNumber(p.peak_gpus)), toChartNumber(last.peak_gpus)];
  return { times, mean, peak, span: [times[0], times[times.length - 1]] };
}
