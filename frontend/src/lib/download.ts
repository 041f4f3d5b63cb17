import { asProblem } from './problem';
import { session } from './session';

/** Authenticated downloads: the browser cannot add the token to a plain link. */
export async function fetchWithToken(path: string): Promise<Blob> {
  const r = await fetch(path, { headers: { Authorization: `Bearer ${session.token()}` } });
  if (!r.ok) throw asProblem(await r.json().catch(() => null), `The server answered ${r.status}.`);
  return r.blob();
}

/** Hands `blob` to the browser as a file named `name`. */
export function saveBlob(blob: Blob, name: string) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

/** 1536 → "1.5 KiB". */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
