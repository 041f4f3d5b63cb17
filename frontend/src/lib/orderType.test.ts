import { describe, expect, it } from 'vitest';
import { EMPTY_ORDER_TYPE, isoToLocal, localToIso, orderFields, orderTypeText, quoteFields, tifsFor, unitsFitText } from './orderType';

const form = (patch: Partial<typeof EMPTY_ORDER_TYPE>) => ({ ...EMPTY_ORDER_TYPE, ...patch });

describe('order type fields', () => {
  it('sends nothing that was not set, and a pooled order keeps its max wait', () => {
    expect(orderFields('on_demand', EMPTY_ORDER_TYPE, null)).toEqual({});
    expect(orderFields('pooled', EMPTY_ORDER_TYPE, 300)).toEqual({ max_wait_s: 300 });
    expect(quoteFields('on_demand', EMPTY_ORDER_TYPE)).toEqual({});
  });

  it('sends a time in force instead of the max wait, never both', () => {
    expect(orderFields('pooled', form({ tif: 'gtc' }), 300)).toEqual({ time_in_force: 'gtc' });
    expect(orderFields('on_demand', form({ tif: 'ioc' }), null)).toEqual({ time_in_force: 'ioc' });
  });

  it('sends expires_at only with gtt, in UTC', () => {
    const local = isoToLocal(Date.parse('2030-01-02T03:04:00Z'));
    expect(orderFields('on_demand', form({ tif: 'gtt', expiresAt: local }), null)).toEqual({
      time_in_force: 'gtt',
      expires_at: '2030-01-02T03:04:00.000Z',
    });
    expect(orderFields('on_demand', form({ tif: 'ioc', expiresAt: local }), null)).toEqual({ time_in_force: 'ioc' });
    // Typed but not a time: sent as typed, for the server to name.
    expect(localToIso('soon')).toBe('soon');
  });

  it('sends units with all-or-none or a minimum, on the modes that take them', () => {
    expect(orderFields('on_demand', form({ count: 2, allOrNone: true }), null)).toEqual({ count: 2, all_or_none: true });
    expect(orderFields('pooled', form({ count: 3, minCount: 2 }), 60)).toEqual({ max_wait_s: 60, count: 3, min_count: 2 });
    // All-or-none and fill-or-kill take every unit: no minimum goes with them.
    expect(orderFields('on_demand', form({ count: 3, minCount: 2, allOrNone: true }), null)).toEqual({ count: 3, all_or_none: true });
    expect(orderFields('on_demand', form({ tif: 'fok', count: 3, minCount: 2 }), null)).toEqual({ time_in_force: 'fok', count: 3 });
    expect(quoteFields('on_demand', form({ count: 4 }))).toEqual({ count: 4 });
    // Spot and reserved take no units; spot no time in force, reserved no waiting.
    expect(orderFields('spot', form({ tif: 'gtc', count: 2, allOrNone: true }), null)).toEqual({});
    expect(orderFields('reserved', form({ tif: 'gtc', count: 2 }), null)).toEqual({});
    expect(orderFields('reserved', form({ tif: 'fok' }), null)).toEqual({ time_in_force: 'fok' });
    expect(quoteFields('reserved', form({ count: 4 }))).toEqual({});
    expect(tifsFor('spot')).toEqual([]);
    expect(tifsFor('reserved')).toEqual(['ioc', 'fok']);
  });
});

describe('order type text', () => {
  it('names the time in force, the units and the fewest taken', () => {
    expect(orderTypeText({ time_in_force: 'fok', count: 2, min_count: 2 })).toBe('fok · 2 units (min 2)');
    expect(orderTypeText({ time_in_force: 'ioc', expires_at: null, count: 1, min_count: 1 })).toBe('ioc · 1 unit');
    expect(orderTypeText({ time_in_force: 'gtt', expires_at: '2030-01-02T03:04:00Z', count: 3, min_count: 1 }, (t) => `<${t}>`)).toBe(
      'gtt until <2030-01-02T03:04:00Z> · 3 units (min 1)',
    );
    expect(orderTypeText({ time_in_force: null, count: 1, min_count: 1 })).toBe('until cancelled (spot) · 1 unit');
  });

  it('says how many units of a quote fit now and what they cost together', () => {
    expect(unitsFitText({ count: 3, placeable_now: 2, price_per_hour: '11.07684' })).toBe('2 of 3 units fit now, $11.08/h together.');
    expect(unitsFitText({ count: 2, placeable_now: 0, price_per_hour: '0' })).toBe('None of 2 units fit now.');
  });
});
