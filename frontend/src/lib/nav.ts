import type { SessionUser } from './session';

/** Where each role lands after signing in. */
export function home(role: SessionUser['role'] | undefined): string {
  switch (role) {
    case 'buyer':
      return '/leases';
    case 'provider':
      return '/provider';
    case 'admin':
      return '/admin';
    default:
      return '/signin';
  }
}
