import { describe, expect, it } from 'vitest';
import { formatSeconds, formatShare, formatUnits, groupRows, heldAnything, periodWindow, profileInput, tcoBody, workPriced } from './tco';

const shape = (peak: string, mean: string, baseline: string, above: string, hours: string) => ({
  peak,
  mean,
  baseline,
  mean_above_baseline: above,
  unit_hours: hours,
});
const group = (key: string) => ({
  key,
  tflops_units: shape('400', '93.75', '100', '37.5', '375'),
  vram_units: shape('8', '1.875', '2', '0.75', '7.5'),
  durations: { leases: 3, mean_s: '3300', p50_s: 1800, p90_s: 7200, p99_s: 7200, max_s: 7200 },
  utilization: { measured_tflops_h: '250', used_tflops_h: '185', fraction: '0.74' },
});
const profile = {
  from: '2026-01-31T00:00:00Z',
  to: '2026-01-31T04:00:00Z',
  elapsed_s: 14400,
  spot_share: '0.4',
  total: group('all'),
  by_mode: [group('on_demand'), group('spot')],
  by_gpu_model: [group('H100-SXM5-80GB')],
  by_tag: [group('team=ml')],
};
const form = { nodePricePerHour: ' 20 ', months: '', utilization: '', gpuModel: null, useShownProfile: false };

describe('the TCO body', () => {
  it('leaves blank fields to the server and keeps decimals as typed strings', () => {
    expect(tcoBody(form)).toEqual({ node_price_per_hour: '20' });
    expect(tcoBody({ ...form, months: '12', utilization: '0.60', gpuModel: 'H100-SXM5-80GB' })).toEqual({
      node_price_per_hour: '20',
      months: 12,
      utilization: '0.60',
      gpu_model: 'H100-SXM5-80GB',
    });
  });

  it('passes a months value that is not a whole number on, so the server names the field', () => {
    expect(tcoBody({ ...form, months: '1.5' }).months).toBe('1.5');
  });

  it('prices the shown profile only when asked, from its total', () => {
    expect(tcoBody({ ...form, useShownProfile: true }).profile).toBeUndefined();
    const body = tcoBody({ ...form, useShownProfile: true }, profile);
    expect(body.profile).toEqual(profileInput(profile));
    expect(body.profile?.tflops_units).toEqual({ peak: '400', mean: '93.75', baseline: '100', mean_above_baseline: '37.5' });
    expect(body.profile?.spot_share).toBe('0.4');
    expect(tcoBody(form, profile).profile).toBeUndefined();
  });

  it('prices an import by its id, never with a profile beside it', () => {
    const id = '01a2b3c4-0000-7000-8000-00000000abcd';
    expect(tcoBody({ ...form, useShownProfile: true }, profile, id)).toEqual({ node_price_per_hour: '20', import_id: id });
    expect(tcoBody({ ...form, gpuModel: 'A100-SXM4-80GB' }, undefined, id)).toEqual({ node_price_per_hour: '20', gpu_model: 'A100-SXM4-80GB', import_id: id });
  });

  it('says what the answer priced', () => {
    expect(workPriced({ profile_source: 'history' })).toBe('your last 30 days');
    expect(workPriced({ profile_source: 'body' })).toBe('the profile given');
    expect(workPriced({ profile_source: 'import', import_id: '01a2b3c4-0000-7000-8000-00000000abcd' })).toBe('the imported job history 0000abcd');
    expect(workPriced({ profile_source: 'import', import_id: null })).toBe('the imported job history');
  });
});

describe('the profile', () => {
  it('lists the total first, then each group with what it is grouped by', () => {
    expect(groupRows(profile).map((r) => r.id)).toEqual(['all', 'Mode:on_demand', 'Mode:spot', 'GPU model:H100-SXM5-80GB', 'Tag:team=ml']);
  });

  it('knows an empty history', () => {
    expect(heldAnything(profile)).toBe(true);
    const none = { ...profile, total: { ...group('all'), tflops_units: shape('0', '0', '0', '0', '0'), vram_units: shape('0', '0', '0', '0', '0') } };
    expect(heldAnything(none)).toBe(false);
  });

  it('windows a period up to a minute after now', () => {
    const now = new Date('2026-12-02T07:30:20Z');
    expect(periodWindow('month', now)).toEqual({ from: '2026-12-01T00:00:00.000Z', to: '2026-12-02T07:32:00.000Z' });
    expect(periodWindow('7d', now).from).toBe('2026-11-25T07:32:00.000Z');
  });

  it('never shows a small mean as 0', () => {
    expect([formatUnits('93.75'), formatUnits('1234.5678'), formatUnits('0.000214'), formatUnits('0.520833'), formatUnits('0'), formatUnits(null)]).toEqual([
      '93.75',
      '1,234.57',
      '0.000214',
      '0.521',
      '0',
      '—',
    ]);
  });

  it('formats durations and shares for people, shares exactly', () => {
    expect([formatSeconds(45), formatSeconds(900), formatSeconds(5400), formatSeconds(172800), formatSeconds(null)]).toEqual([
      '45 s',
      '15 min',
      '1.5 h',
      '2 d',
      '—',
    ]);
    expect([formatShare('0.74'), formatShare('0.252781'), formatShare('1'), formatShare('0'), formatShare('-0.05'), formatShare(null)]).toEqual([
      '74 %',
      '25.3 %',
      '100 %',
      '0 %',
      '-5 %',
      '—',
    ]);
  });
});
