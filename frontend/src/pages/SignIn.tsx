import { Alert, Button, Card, PasswordInput, SegmentedControl, Stack, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import { api } from '../api/client';
import { home } from '../lib/nav';
import { asProblem, fieldError } from '../lib/problem';
import { useAction } from '../lib/action';
import { session, useSession, type SessionUser } from '../lib/session';
import { FormProblem } from '../components/States';

async function signIn(email: string, password: string): Promise<SessionUser> {
  const { data, error } = await api.POST('/v1/auth/login', { body: { email, password } });
  if (!data) throw asProblem(error, 'Could not sign in.');
  const me = await fetch('/v1/me', { headers: { Authorization: `Bearer ${data.access_token}` } });
  if (!me.ok) throw asProblem(await me.json().catch(() => null), 'Could not read your account.');
  const user = (await me.json()) as SessionUser;
  session.signIn(data, user);
  return user;
}

export function SignIn() {
  const s = useSession();
  const [, navigate] = useLocation();
  const search = useSearch();
  const next = new URLSearchParams(search).get('next');
  const [tab, setTab] = useState<string>('signin');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<'buyer' | 'provider'>('buyer');
  const { busy, problem, setProblem, run } = useAction();

  const go = (user: SessionUser) => navigate(next && next.startsWith('/') && next !== '/signin' ? next : home(user.role));

  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await run(async () => {
      if (tab === 'register') {
        const { error } = await api.POST('/v1/auth/register', { body: { email, password, name, role } });
        if (error) return { error };
      }
      return { data: await signIn(email, password) };
    });
    if (r?.data) go(r.data);
  }

  return (
    <Card withBorder maw={420} mx="auto" mt="xl" padding="lg">
      <Title order={1} size="h2" mb="md">
        {tab === 'register' ? 'Create an account' : 'Sign in'}
      </Title>
      {s.notice && (
        <Alert color="blue" mb="md" data-testid="session-notice">
          {s.notice}
        </Alert>
      )}
      <SegmentedControl
        fullWidth
        mb="md"
        aria-label="Sign in or register"
        value={tab}
        onChange={(t) => {
          setTab(t);
          setProblem(null);
        }}
        data={[
          { value: 'signin', label: 'Sign in' },
          { value: 'register', label: 'Register' },
        ]}
      />
      <form onSubmit={submit} noValidate>
        <Stack>
          {tab === 'register' && (
            <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} required />
          )}
          <TextInput
            label="Email"
            type="email"
            autoComplete="username"
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={fieldError(problem, 'email')}
            required
          />
          <PasswordInput
            label="Password"
            autoComplete={tab === 'register' ? 'new-password' : 'current-password'}
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError(problem, 'password')}
            description={tab === 'register' ? 'At least 12 characters.' : undefined}
            required
          />
          {tab === 'register' && (
            <SegmentedControl
              aria-label="Account type"
              value={role}
              onChange={(v) => setRole(v as 'buyer' | 'provider')}
              data={[
                { value: 'buyer', label: 'I buy compute' },
                { value: 'provider', label: 'I provide GPUs' },
              ]}
            />
          )}
          <FormProblem problem={problem} title={tab === 'register' ? 'Could not register' : 'Could not sign in'} />
          <Button type="submit" loading={busy}>
            {tab === 'register' ? 'Register and sign in' : 'Sign in'}
          </Button>
        </Stack>
      </form>
    </Card>
  );
}
