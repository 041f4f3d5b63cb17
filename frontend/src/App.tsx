import { AppShell, Burger, Button, Group, MantineProvider, NavLink, Text, createTheme } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { lazy, Suspense, type ReactNode } from 'react';
import { Loading } from './components/States';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { session, useSession, type SessionUser } from './lib/session';
import { home } from './lib/nav';
import { SignIn } from './pages/SignIn';

// Each page is its own chunk: the first page loads React, Mantine and the
// sign-in form, not the charts. A page loaded before the first render
// (`preload`) renders directly: a lazy one suspends, and React holds a
// Suspense boundary's content back until 300 ms after its fallback showed,
// which was a third of /market's cold first render.
type Page = React.ComponentType<any> & { preload: () => Promise<void> };
const page = <K extends string>(load: () => Promise<Record<K, React.ComponentType<any>>>, name: K): Page => {
  let loaded: React.ComponentType<any> | undefined;
  const Lazy = lazy(() => load().then((m) => ({ default: (loaded = m[name]) })));
  const Page = ((props: Record<string, unknown>) => {
    const Component: React.ComponentType<any> = loaded ?? Lazy;
    return <Component {...props} />;
  }) as Page;
  Page.preload = () =>
    load().then((m) => {
      loaded = m[name];
    });
  return Page;
};
const Leases = page(() => import('./pages/Leases'), 'Leases');
const LeaseDetail = page(() => import('./pages/LeaseDetail'), 'LeaseDetail');
const Buy = page(() => import('./pages/Buy'), 'Buy');
const Billing = page(() => import('./pages/Billing'), 'Billing');
const Capacity = page(() => import('./pages/Capacity'), 'Capacity');
const Trials = page(() => import('./pages/Trials'), 'Trials');
export const Market = page(() => import('./pages/Market'), 'Market');
const Admin = page(() => import('./pages/Admin'), 'Admin');
const Provider = page(() => import('./pages/Provider'), 'Provider');
const NodePage = page(() => import('./pages/NodePage'), 'NodePage');
const Account = page(() => import('./pages/Account'), 'Account');

// Darker shades than Mantine's default 6 keep white-on-colour text above the
// WCAG AA contrast ratio; the system font stack loads nothing.
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: 8,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fontFamilyMonospace: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
});

/** The nonce the server gave this page for inline `<style>` elements (see vite.config.ts). */
function styleNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '';
}

type Role = SessionUser['role'];
const NAV: { href: string; label: string; roles: Role[] | 'all' }[] = [
  { href: '/market', label: 'Market', roles: 'all' },
  { href: '/buy', label: 'Buy', roles: ['buyer'] },
  { href: '/leases', label: 'Leases', roles: ['buyer'] },
  { href: '/billing', label: 'Billing', roles: ['buyer'] },
  { href: '/capacity', label: 'Capacity & TCO', roles: ['buyer'] },
  { href: '/trials', label: 'Trials', roles: ['buyer'] },
  { href: '/provider', label: 'Nodes', roles: ['provider'] },
  { href: '/admin', label: 'Admin', roles: ['admin'] },
  { href: '/account', label: 'Account', roles: ['buyer', 'provider'] },
];

/** The pages behind sign-in, with the roles that see them; `:id` reaches the page as its `id` prop. */
const GUARDED: { path: string; roles: Role[]; Page: React.ComponentType<any> }[] = [
  { path: '/buy', roles: ['buyer'], Page: Buy },
  { path: '/leases', roles: ['buyer'], Page: Leases },
  { path: '/leases/:id', roles: ['buyer'], Page: LeaseDetail },
  { path: '/billing', roles: ['buyer'], Page: Billing },
  { path: '/capacity', roles: ['buyer'], Page: Capacity },
  { path: '/trials/:id?', roles: ['buyer'], Page: Trials },
  { path: '/provider', roles: ['provider'], Page: Provider },
  { path: '/provider/nodes/:id', roles: ['provider'], Page: NodePage },
  { path: '/admin', roles: ['admin'], Page: Admin },
  { path: '/account', roles: ['buyer', 'provider'], Page: Account },
];

/** A page for signed-in users of the given roles; others go to sign in. */
function Guard({ roles, children }: { roles: Role[]; children: ReactNode }) {
  const s = useSession();
  const [location] = useLocation();
  if (!s.user) return <Redirect to={`/signin?next=${encodeURIComponent(location)}`} />;
  if (!roles.includes(s.user.role)) return <Redirect to={home(s.user.role)} />;
  return <>{children}</>;
}

export function App() {
  const s = useSession();
  const [opened, { toggle }] = useDisclosure();
  const [location] = useLocation();
  const role = s.user?.role;
  return (
    <MantineProvider theme={theme} getStyleNonce={styleNonce}>
      <AppShell header={{ height: 56 }} navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between">
            <Group>
              <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
              <Text fw={700} size="lg" component={Link} href="/">
                gpuex
              </Text>
            </Group>
            {s.user ? (
              <Group gap="sm">
                <Text size="sm" data-testid="whoami">
                  {s.user.email} ({s.user.role})
                </Text>
                <Button size="xs" variant="default" onClick={() => session.signOut()}>
                  Sign out
                </Button>
              </Group>
            ) : (
              <Button size="xs" component={Link} href="/signin">
                Sign in
              </Button>
            )}
          </Group>
        </AppShell.Header>
        <AppShell.Navbar p="xs" component="nav" aria-label="Pages">
          {NAV.filter((n) => n.roles === 'all' || (role && n.roles.includes(role))).map((n) => (
            <NavLink key={n.href} component={Link} href={n.href} label={n.label} active={location.startsWith(n.href)} variant="filled" />
          ))}
        </AppShell.Navbar>
        <AppShell.Main>
            <Suspense fallback={<Loading />}>
            <Switch>
              <Route path="/">{s.user ? <Redirect to={home(role)} /> : <Redirect to="/signin" />}</Route>
              <Route path="/signin" component={SignIn} />
              <Route path="/market" component={Market} />
              {GUARDED.map(({ path, roles, Page }) => (
                <Route key={path} path={path}>
                  {(params: Record<string, string>) => (
                    <Guard roles={roles}>
                      <Page {...params} />
                    </Guard>
                  )}
                </Route>
              ))}
              <Route>
                <Text>There is no page here.</Text>
              </Route>
            </Switch>
            </Suspense>
        </AppShell.Main>
      </AppShell>
    </MantineProvider>
  );
}
