import { describe, expect, it } from 'vitest';
import { add, compare, formatMoney, formatUnitPrice, formatQuantity, multiply, percent, saving, subtract } from './money';

describe('money as decimal strings', () => {
  it('adds without binary floating-point error', () => {
    expect(add('0.1', '0.2')).toBe('0.3');
    expect(add('1000000000000000.01', '0.02')).toBe('1000000000000000.03');
    expect(add('1', null, undefined, '')).toBe('1');
  });

  it('subtracts and multiplies exactly', () => {
    expect(subtract('10', '0.000001')).toBe('9.999999');
    expect(multiply('0.0021', '100')).toBe('0.21');
    expect(multiply('0.1', '3')).toBe('0.3');
  });

  it('formats amounts with two decimals, half-even', () => {
    expect(formatMoney('12.5')).toBe('$12.50');
    expect(formatMoney('1234567.891')).toBe('$1,234,567.89');
    expect(formatMoney('0.125')).toBe('$0.12');
    expect(formatMoney('0.135')).toBe('$0.14');
    expect(formatMoney('-3.2')).toBe('-$3.20');
    expect(formatMoney('0')).toBe('$0.00');
  });

  it('keeps sub-cent unit prices readable', () => {
    expect(formatMoney('0.0021')).toBe('$0.0021');
    expect(formatMoney('0.00105')).toBe('$0.00105');
    expect(formatMoney('0.0012626628')).toBe('$0.001263');
  });

  it('shows unit prices exactly to six decimals', () => {
    expect(formatUnitPrice('0.0513')).toBe('$0.0513');
    expect(formatUnitPrice('0.05')).toBe('$0.05');
    expect(formatUnitPrice('0.0012626628')).toBe('$0.001263');
    expect(formatUnitPrice('2')).toBe('$2.00');
  });

  it('names other currencies and shows missing values as a dash', () => {
    expect(formatMoney('5', 'CHF')).toBe('5.00 CHF');
    expect(formatMoney('5', 'EUR')).toBe('€5.00');
    expect(formatMoney(null)).toBe('—');
    expect(formatMoney('not a number')).toBe('—');
  });

  it('formats quantities', () => {
    expect(formatQuantity('989.000')).toBe('989');
    expect(formatQuantity('1234.5678')).toBe('1,234.57');
  });

  it('compares and takes percentages', () => {
    expect(compare('0.30', '0.3')).toBe(0);
    expect(compare('2', '10')).toBe(-1);
    expect(percent('25', '200')).toBe('12.5');
    expect(percent('1', '0')).toBe('0');
  });

  it('shows a saving only when there is one', () => {
    expect(saving('1.5', '2')).toEqual({ amount: '0.5', percent: '25' });
    expect(saving('2', '2')).toBeNull();
    expect(saving('3', '2')).toBeNull();
    expect(saving('1', null)).toBeNull();
  });
});
