// A placement as leases and quotes show it:
// `{mode, gpus: [{index, slot: {kind: "mig", profile, start} | {kind: "shared", milli, memory_mb} | {kind: "whole"}}]}`.
export interface Slot {
  kind?: string;
  profile?: string;
  start?: number;
  milli?: number;
  memory_mb?: number;
}
export interface PlacedGpu {
  index: number;
  slot?: Slot;
}

export function placedGpus(placement: unknown): PlacedGpu[] {
  const gpus = (placement as { gpus?: unknown } | null)?.gpus;
  if (!Array.isArray(gpus)) return [];
  return gpus.map((g) => (typeof g === 'number' ? { index: g } : (g as PlacedGpu)));
}

/** The API counts a share's memory in decimal MB (vram_gb × 1000): whole GB read as GB. */
function memory(mb: number): string {
  return mb % 1000 === 0 ? `${mb / 1000} GB` : `${mb} MB`;
}

function slotText(slot: Slot | undefined): string {
  switch (slot?.kind) {
    case 'mig':
      return `MIG ${slot.profile} at slice ${slot.start}`;
    case 'shared':
      return `${((slot.milli ?? 0) / 10).toFixed(1)} % share, ${memory(slot.memory_mb ?? 0)}`;
    default:
      return 'whole';
  }
}

export function placementText(placement: unknown): string {
  const gpus = placedGpus(placement);
  if (gpus.length === 0) return '—';
  return gpus.map((g) => `GPU ${g.index} (${slotText(g.slot)})`).join(', ');
}
