import { describe, expect, it } from 'vitest';
import { migCells, sharedCells } from './slots';

const profiles = [
  { name: '1g.10gb', memory_slices: 1, starts: [0, 1, 2, 3, 4, 5, 6] },
  { name: '3g.40gb', memory_slices: 4, starts: [0, 4] },
  { name: '7g.80gb', memory_slices: 8, starts: [0] },
];

describe('GPU slots', () => {
  it('puts a MIG instance on its memory slices and leaves the rest free', () => {
    const cells = migCells(
      [
        { lease_id: 'a', kind: 'mig', profile: '1g.10gb', start: 6, milli: 142 },
        { lease_id: 'b', kind: 'mig', profile: '3g.40gb', start: 0, milli: 428 },
      ],
      profiles,
    );
    expect(cells.map((c) => [c.start, c.size, c.leaseId])).toEqual([
      [0, 4, 'b'],
      [4, 1, null],
      [5, 1, null],
      [6, 1, 'a'],
      [7, 1, null],
    ]);
  });

  it('splits a shared GPU by compute share', () => {
    expect(sharedCells([{ lease_id: 'a', kind: 'shared', milli: 250 }]).map((c) => [c.size, c.leaseId])).toEqual([
      [250, 'a'],
      [750, null],
    ]);
  });
});
