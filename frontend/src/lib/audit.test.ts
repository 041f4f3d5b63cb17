import { describe, expect, it } from 'vitest';
import { auditDetails, auditTarget } from './audit';

describe('audit log text', () => {
  it('names a price target by region, model and unit', () => {
    expect(auditTarget('price:eu-west:H100-SXM5-80GB:tflops_h')).toBe('eu-west · H100-SXM5-80GB · TFLOPS-hour');
    expect(auditTarget('user:0b8e')).toBe('user 0b8e');
    expect(auditTarget('odd')).toBe('odd');
  });

  it('summarises each action’s details', () => {
    expect(auditDetails({ action: 'set_price', target: '', details: { list_price: '0.0021', previous: null } })).toBe('$0.0021 (new)');
    expect(auditDetails({ action: 'set_price', target: '', details: { list_price: '0.0021', previous: '0.002' } })).toBe('$0.0021 (was $0.002)');
    expect(auditDetails({ action: 'credit', target: '', details: { amount: '12.5', memo: 'welcome' } })).toBe('$12.50: welcome');
    expect(auditDetails({ action: 'credit', target: '', details: { amount: '12.5', memo: null } })).toBe('$12.50');
    expect(auditDetails({ action: 'billing_adjustment', target: '', details: { amount: '3', reason: 'outage' } })).toBe('$3.00: outage');
    expect(auditDetails({ action: 'put_region', target: '', details: { timezone: 'Europe/Amsterdam' } })).toBe('time zone Europe/Amsterdam');
    expect(auditDetails({ action: 'cordon_node', target: '', details: { cordoned: true, was_quarantined: false } })).toBe('cordoned');
    expect(auditDetails({ action: 'uncordon_node', target: '', details: { cordoned: false, was_quarantined: true } })).toBe('uncordoned (was quarantined)');
  });

  it('falls back to key: value pairs for a shape it does not know', () => {
    expect(auditDetails({ action: 'future_thing', target: '', details: { a: 1, b: 'x', c: null, d: { e: 2 } } })).toBe('a: 1, b: x, d: {"e":2}');
  });
});
