import { describe, expect, it } from 'vitest';
import { heldText, ruleText, summarize, unitsText, wholeNodePrice } from './quote';

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
    expect(s.maxPriceBinds).toBe(false);
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

describe('units held', () => {
  it('shows the GPU memory the order holds in GB, not the size of one unit', () => {
    // vram_gb 16 is 4 units of 4 GB.
    expect(unitsText({ tflops: '100', vram: '4' })).toBe('100 TFLOPS and 16 GB');
    expect(heldText({ held: { tflops: '100', vram: '4' }, asked: { tflops: '100', vram: '4' } })).toBe(
      'Holds 100 TFLOPS and 16 GB of GPU memory (4 × 4 GB VRAM units) per hour.',
    );
  });

  it('says what was asked when the slice rounds up, in the same units', () => {
    expect(heldText({ held: { tflops: '141.286', vram: '2.5' }, asked: { tflops: '100', vram: '2' } })).toBe(
      'Holds 141.29 TFLOPS and 10 GB of GPU memory (2.5 × 4 GB VRAM units) per hour; you asked for 100 TFLOPS and 8 GB: the slice rounds up.',
    );
    // Memory alone rounding up counts too.
    expect(heldText({ held: { tflops: '50', vram: '3' }, asked: { tflops: '50', vram: '2' } })).toMatch(/you asked for 50 TFLOPS and 8 GB/);
  });
});

describe('the pricing rule', () => {
  it('names the mode as the form does', () => {
    expect(ruleText('on_demand: 1.8 × list price')).toBe('On-demand: 1.8 × list price');
    expect(ruleText('reserved: 0.85 × list price; the whole window is owed')).toBe('Reserved: 0.85 × list price; the whole window is owed');
    expect(ruleText('something else')).toBe('something else');
  });
});

describe('max price', () => {
  it('says when the max price asked is below the price of the slice', () => {
    const slice = {
      gpu_model: 'H100-SXM5-80GB',
      region: 'eu-west',
      node_id: 'n',
      placement: {},
      units: { held: { tflops_h: '100', vram_h: '1' }, asked: { tflops_h: '100', vram_h: '1' } },
      price_per_hour: '0.468',
      source: 'primary',
    };
    expect(summarize({ options: [option], slice: { ...slice, max_price_binds: true } }, [h100])!.maxPriceBinds).toBe(true);
    expect(summarize({ options: [option], slice: { ...slice, max_price_binds: false } }, [h100])!.maxPriceBinds).toBe(false);
    expect(summarize({ options: [option] }, [h100])!.maxPriceBinds).toBe(false);
  });
});
