import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/**
 * Writes `x.js.gz` beside each script and stylesheet, so the server sends
 * them compressed without compressing on every request (Node's gzip header
 * carries no timestamp: the output is reproducible).
 */
function precompress(): Plugin {
  return {
    name: 'gpuex-precompress',
    apply: 'build',
    closeBundle() {
      const dir = fileURLToPath(new URL('./dist/assets', import.meta.url));
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css)$/.test(name)) continue;
        writeFileSync(join(dir, name + '.gz'), gzipSync(readFileSync(join(dir, name)), { level: 9 }));
      }
    },
  };
}

// The build is committed (frontend/dist) and embedded in the server, so it
// must be byte-for-byte reproducible: no timestamps, hashed names only.
export default defineConfig({
  plugins: [react(), precompress()],
  // The server's Content-Security-Policy allows styles from this origin
  // only, and inline `<style>` elements (Mantine writes its theme and
  // responsive rules in them) by a nonce fresh with each index.html: the
  // server swaps this placeholder for it (src/api/dashboard.rs).
  html: { cspNonce: 'GPUEX_CSP_NONCE' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      '/v1': 'http://127.0.0.1:8080',
      '/openapi.json': 'http://127.0.0.1:8080',
    },
  },
});
