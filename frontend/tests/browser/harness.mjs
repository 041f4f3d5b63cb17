// Browser tests' plumbing: a real `gpuex demo` (server, three simulated
// agents, seeded accounts) on a free port with a throwaway data folder, and
// Debian's Chromium driven by playwright-core.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '../../..');
export const screenshots = resolve(here, '../../test-results/screenshots');
const require = createRequire(import.meta.url);
export const axePath = require.resolve('axe-core/axe.min.js');

export const LOGINS = {
  admin: ['admin@gpuex.demo', 'demo-admin-password'],
  provider: ['provider@gpuex.demo', 'demo-provider-password'],
  buyer: ['buyer@gpuex.demo', 'demo-buyer-password'],
};

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

/** `args`: more of `gpuex demo`'s options (a scenario that needs its own demo, e.g. `--launcher process`). */
export async function startDemo(bin = process.env.GPUEX_BIN ?? join(repo, 'target/debug/gpuex'), args = []) {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build --workspace --bins\` first (or set GPUEX_BIN)`);
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'gpuex-browser-'));
  const child = spawn(bin, ['demo', '--listen', `127.0.0.1:${port}`, '--data-dir', data, '--interrupt-after', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the demo did not start in 90 s:\n${out}`)), 90_000);
    const check = () => {
      if (out.includes('Ctrl-C stops')) {
        clearTimeout(timer);
        ok();
      } else if (out.includes('could not start')) {
        clearTimeout(timer);
        fail(new Error(out));
      }
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the demo exited (${code}):\n${out}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    output: () => out,
    async stop() {
      child.kill('SIGINT');
      await new Promise((ok) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          ok();
        }, 60_000); // the demo waits for its agents to end their workloads
        child.on('exit', () => {
          clearTimeout(t);
          ok();
        });
      });
      rmSync(data, { recursive: true, force: true });
    },
  };
}

export async function launch() {
  mkdirSync(screenshots, { recursive: true });
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(`${executablePath} is missing: install Debian's Chromium (apt-get install -y chromium) or set CHROMIUM`);
  }
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A page that records every console error, uncaught exception and
 * Content-Security-Policy violation (the server's policy is strict: ARCHITECTURE.md §19). */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolations.push(`${e.effectiveDirective} refused ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`),
    );
  });
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(String(e)));
  return page;
}

/** The Content-Security-Policy violations the page reported so far. */
export async function cspViolations(page) {
  return page.evaluate(() => window.__cspViolations ?? ['the violation recorder did not run']);
}

/** The API as a test's own setup step (not what the browser checks). */
export async function apiCall(base, method, path, token, body) {
  const r = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, body: json };
}

export async function apiLogin(base, who) {
  const [email, password] = LOGINS[who];
  const r = await apiCall(base, 'POST', '/v1/auth/login', null, { email, password });
  return r.body.access_token;
}

export async function signIn(page, base, who) {
  const [email, password] = LOGINS[who];
  await page.goto(base + '/signin');
  await page.getByLabel('Email').fill(email);
  await page.locator('input[type=password]').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('whoami').waitFor();
}

/** Serious or critical axe-core violations on the page as it stands. */
export async function axeViolations(page) {
  // Evaluated through the DevTools protocol, as the tests' own code: an
  // inline <script> tag would be refused by the page's Content-Security-Policy.
  await page.evaluate(readFileSync(axePath, 'utf8'));
  const result = await page.evaluate(async () => {
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function waitFor(predicate, what, timeoutMs = 30_000, everyMs = 500) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await predicate();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
