// How a GPU is drawn on the provider's node page: MIG GPUs as their memory
// slices (each instance spans `memory_slices` from its `start`), shared GPUs
// as the compute shares their leases hold, whole GPUs as one block.
export interface SliceLike {
  lease_id: string;
  kind: string;
  profile?: string | null;
  start?: number | null;
  milli: number;
}
export interface ProfileLike {
  name: string;
  memory_slices: number;
  starts: number[];
}

export interface Cell {
  /** First memory slice (MIG), or position in thousandths (shared). */
  start: number;
  /** Memory slices (MIG) or milli-GPU (shared) it covers. */
  size: number;
  leaseId: string | null;
  label: string;
}

/** Memory slices of a MIG GPU: the furthest any profile reaches (8 on A100/H100). */
export function memorySlices(profiles: ProfileLike[]): number {
  return Math.max(8, ...profiles.flatMap((p) => p.starts.map((s) => s + p.memory_slices)));
}

export function migCells(slices: SliceLike[], profiles: ProfileLike[]): Cell[] {
  const total = memorySlices(profiles);
  const cells: Cell[] = [];
  const taken = [...slices].filter((s) => s.kind === 'mig' && s.start !== null && s.start !== undefined).sort((a, b) => a.start! - b.start!);
  let at = 0;
  for (const s of taken) {
    const size = profiles.find((p) => p.name === s.profile)?.memory_slices ?? 1;
    for (; at < s.start!; at++) cells.push({ start: at, size: 1, leaseId: null, label: 'free' });
    cells.push({ start: s.start!, size, leaseId: s.lease_id, label: s.profile ?? 'mig' });
    at = s.start! + size;
  }
  for (; at < total; at++) cells.push({ start: at, size: 1, leaseId: null, label: 'free' });
  return cells;
}

export function sharedCells(slices: SliceLike[]): Cell[] {
  const cells: Cell[] = [];
  let at = 0;
  for (const s of slices) {
    cells.push({ start: at, size: s.milli, leaseId: s.lease_id, label: `${(s.milli / 10).toFixed(1)} %` });
    at += s.milli;
  }
  if (at < 1000) cells.push({ start: at, size: 1000 - at, leaseId: null, label: 'free' });
  return cells;
}
