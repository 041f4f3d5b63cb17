// The signed-in user: the access token lives in sessionStorage (gone with the
// tab, never in localStorage). The API has no refresh token, so when the
// token expires — or any call answers 401 — the user is sent back to sign in
// with a message saying why.
import { useSyncExternalStore } from 'react';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: 'buyer' | 'provider' | 'admin' | 'agent';
}

export interface SessionState {
  token: string | null;
  expiresAt: string | null;
  user: SessionUser | null;
  /** Why the user was signed out, shown on the sign-in page. */
  notice: string | null;
}

const KEY = 'gpuex.session';
const EMPTY: SessionState = { token: null, expiresAt: null, user: null, notice: null };

function load(): SessionState {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return EMPTY;
    const saved = JSON.parse(raw) as SessionState;
    if (saved.expiresAt && Date.parse(saved.expiresAt) <= Date.now()) {
      return { ...EMPTY, notice: 'Your session expired: sign in again.' };
    }
    return { ...saved, notice: null };
  } catch {
    return EMPTY;
  }
}

let state: SessionState = typeof sessionStorage === 'undefined' ? EMPTY : load();
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function set(next: SessionState) {
  state = next;
  if (typeof sessionStorage !== 'undefined') {
    if (next.token) sessionStorage.setItem(KEY, JSON.stringify({ ...next, notice: null }));
    else sessionStorage.removeItem(KEY);
  }
  scheduleExpiry();
  listeners.forEach((l) => l());
}

function scheduleExpiry() {
  clearTimeout(expiryTimer);
  if (!state.token || !state.expiresAt) return;
  const ms = Date.parse(state.expiresAt) - Date.now();
  // setTimeout cannot wait longer than about 24.8 days.
  expiryTimer = setTimeout(() => session.expire('Your session expired: sign in again.'), Math.min(Math.max(ms, 0), 2 ** 31 - 1));
}

export const session = {
  get: () => state,
  token: () => state.token,
  signIn(token: string, expiresAt: string, user: SessionUser) {
    set({ token, expiresAt, user, notice: null });
  },
  signOut() {
    set({ ...EMPTY, notice: 'You signed out.' });
  },
  expire(notice: string) {
    if (!state.token) return;
    set({ ...EMPTY, notice });
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

scheduleExpiry();

export function useSession(): SessionState {
  return useSyncExternalStore(session.subscribe, session.get);
}
