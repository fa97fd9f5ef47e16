import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))
/** The service's address, for `npm run dev` here: API calls are proxied to it. */
const service = process.env.FLOWD_URL ?? 'http://127.0.0.1:3000'

export default defineConfig({
  root: here,
  // The service serves the build at /editor/; every asset URL is absolute under it.
  base: '/editor/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/editor', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: { '/auth': service, '/v1': service },
  },
})
