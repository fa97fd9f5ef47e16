import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))
/** The service's address, for `npm run dev` here: API calls are proxied to it. */
const service = process.env.FLOWD_URL ?? 'http://127.0.0.1:3000'

export default defineConfig({
  root: here,
  // The service serves both pages' assets from /assets/ (hashed names, cached for a year).
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    // build.mjs removes the files of earlier builds once they are a few minutes old, so a page
    // loaded just before a rebuild (a test running beside it) still gets its assets.
    emptyOutDir: false,
    assetsDir: 'assets',
    // Written beside the build for maintainers, never referenced by the assets nor served.
    sourcemap: 'hidden',
    rollupOptions: {
      input: { editor: fileURLToPath(new URL('editor.html', import.meta.url)), dashboard: fileURLToPath(new URL('dashboard.html', import.meta.url)) },
      // The editor imports the service's node type modules (src/domain/nodes) for their exits and
      // limits; building or compiling TypeBox schemas has no side effects, so the schemas it does
      // not read, and TypeBox with them, are left out.
      treeshake: { manualPureFunctions: ['Type', 'TypeCompiler'] },
      // React in a chunk of its own, shared by both pages and cached across releases of either.
      output: { manualChunks: (id) => (/[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/.test(id) ? 'react' : undefined) },
    },
  },
  server: {
    proxy: { '/auth': service, '/v1': service },
  },
})
