import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The build is committed (frontend/dist) and embedded in the server, so it
// must be byte-for-byte reproducible: no timestamps, hashed names only.
export default defineConfig({
  plugins: [react()],
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
  test: {
    include: ['src/**/*.test.ts'],
  },
} as any);
