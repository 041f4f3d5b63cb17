import { describe, expect, it } from 'vitest';
import { summarize, wholeNodePrice } from './quote';

const h100 = { name: 'H100-SXM5-80GB', tflops_units: '989', vram_units: '20' };
const option = {
  gpu_model: 'H100-SXM5-80GB',
  region: 'eu-west',
  price_per_hour: '0.5220',
  breakdown: [
    { unit: 'tflops_h', quantity: '100', unit_price: '0.00378' },
    { unit: 'vram_h', quantity: '4', unit_price: '0.09' },
  ],
};

describe('quote summary', () => {
  it('prices a whole 8-GPU node from the unit prices, exactly', () => {
    // 8 × (989 × 0.00378 + 20 × 0.09) = 8 × (3.73842 + 1.8) = 44.30736
    expect(wholeNodePrice(option, h100)).toBe('44.30736');
  });

  it('shows the slice, its units and the saving against a whole node', () => {
    const s = summarize(
      {
        options: [option],
        slice: {
          gpu_model: 'H100-SXM5-80GB',
          region: 'eu-west',
          node_id: 'n',
          placement: {},
          units: { held: { tflops_h: '141.286', vram_h: '2.5' }, asked: { tflops_h: '100', vram_h: '2' } },
          price_per_hour: '0.714',
          source: 'primary',
        },
      },
      [h100],
    )!;
    expect(s.source).toBe('primary');
    expect(s.held).toEqual({ tflops: '141.286', vram: '2.5' });
    expect(s.asked).toEqual({ tflops: '100', vram: '2' });
    expect(s.pricePerHour).toBe('0.714');
    expect(s.wholeNodeSaving).toEqual({ amount: '43.59336', percent: '98.4' });
    expect(s.resale).toBeNull();
  });

  it('names a cheaper resale listing and what it saves', () => {
    const s = summarize(
      {
        options: [option],
        slice: {
          gpu_model: 'H100-SXM5-80GB',
          region: 'eu-west',
          node_id: 'n',
          placement: {},
          units: {},
          price_per_hour: '0.40',
          source: 'resale',
          listing_id: 'l-1',
          primary_price_per_hour: '0.5220',
          saving_per_hour: '0.122',
        },
      },
      [h100],
    )!;
    expect(s.source).toBe('resale');
    expect(s.resale).toEqual({ listingId: 'l-1', primary: '0.5220', saving: '0.122' });
    expect(s.held).toBeNull();
  });

  it('falls back to the cheapest option when no slice is free', () => {
    const s = summarize({ options: [option], slice: null }, [])!;
    expect(s.source).toBe('estimate');
    expect(s.wholeNodePerHour).toBeNull();
    expect(summarize({ options: [], slice: null }, [])).toBeNull();
  });
});
