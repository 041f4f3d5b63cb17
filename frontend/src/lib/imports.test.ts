import { describe, expect, it } from 'vitest';
import { concurrencyChart, defaultedNote, guessFormat, importQuery, importSummary, importWindow, rejectedNote } from './imports';

const sacct = {
  id: '01a2b3c4-0000-7000-8000-00000000abcd',
  format: 'slurm' as const,
  created_at: '2026-12-07T21:00:00Z',
  rows: 3,
  skipped: 4,
  rejected_count: 2,
  rejected: [
    { line: 8, reason: 'job 1005 is still running (End is Unknown)' },
    { line: 9, reason: 'Start is not a time' },
  ],
  defaulted_model_rows: 1,
  default_gpu_model: 'H100-SXM5-80GB',
  from: '2026-11-02T00:00:00Z',
  to: '2026-11-02T05:00:00Z',
  bytes: 1234,
};

describe('the upload', () => {
  it('guesses the format from the file name only where the name says', () => {
    expect(guessFormat('pods.json')).toBe('k8s');
    expect(guessFormat('JOBS.CSV')).toBe('csv');
    expect(guessFormat('sacct.txt')).toBeNull();
    expect(guessFormat('sacct')).toBeNull();
    expect(guessFormat('export.csv.txt')).toBeNull();
  });

  it('sends the default model only when one was chosen', () => {
    expect(importQuery('slurm', null)).toEqual({ format: 'slurm' });
    expect(importQuery('csv', 'A100-SXM4-80GB')).toEqual({ format: 'csv', gpu_model: 'A100-SXM4-80GB' });
  });
});

describe('what an import answered', () => {
  it('says what it made of the file', () => {
    expect(importSummary(sacct)).toBe('3 jobs taken, 4 rows skipped (no GPU held), 2 rows refused');
    expect(importSummary({ ...sacct, rows: 1, skipped: 1, rejected_count: 1 })).toBe('1 job taken, 1 row skipped (no GPU held), 1 row refused');
    expect(importSummary({ ...sacct, rows: 12345, skipped: 0, rejected_count: 0 })).toBe('12,345 jobs taken, 0 rows skipped (no GPU held), 0 rows refused');
  });

  it('says how many jobs were priced as the default model', () => {
    expect(defaultedNote(sacct)).toBe('1 job named no GPU model the catalog knows and is priced as H100-SXM5-80GB.');
    expect(defaultedNote({ defaulted_model_rows: 1200, default_gpu_model: 'L40S-48GB' })).toBe('1,200 jobs named no GPU model the catalog knows and are priced as L40S-48GB.');
  });

  it('says when the refused rows listed are only the first ones', () => {
    expect(rejectedNote(sacct)).toBe('The refused rows:');
    expect(rejectedNote({ ...sacct, rejected_count: 1, rejected: sacct.rejected.slice(0, 1) })).toBe('The refused row:');
    expect(rejectedNote({ ...sacct, rejected_count: 2500 })).toBe('The first 2 of 2,500 refused rows:');
    expect(rejectedNote({ ...sacct, rejected_count: 0, rejected: [] })).toBeNull();
  });

  it('shows the window only when a job was taken', () => {
    expect(importWindow(sacct)).toMatch(/2026.* – .*2026/);
    expect(importWindow({ from: null, to: null })).toBe('—');
    expect(importWindow({})).toBe('—');
  });
});

describe('the concurrency chart', () => {
  const point = (from: string, to: string, mean: string, peak: string) => ({ from, to, mean_gpus: mean, peak_gpus: peak });

  it('draws each stretch at its start and the last one to its end, in Unix seconds', () => {
    const chart = concurrencyChart([
      point('2026-11-02T00:00:00Z', '2026-11-02T00:01:15Z', '2', '2'),
      point('2026-11-02T00:01:15Z', '2026-11-02T00:02:30Z', '2.5', '7'),
    ]);
    const t0 = Date.parse('2026-11-02T00:00:00Z') / 1000;
    expect(chart).toEqual({
      times: [t0, t0 + 75, t0 + 150],
      mean: [2, 2.5, 2.5],
      peak: [2, 7, 7],
      span: [t0, t0 + 150],
    });
  });

  it('has nothing to draw with no stretch', () => {
    expect(concurrencyChart([])).toBeNull();
  });
});
