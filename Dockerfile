# The Conversation Flow Service: `docker build -t flowd .`, or `docker compose up` with
# EventStoreDB and Postgres (docker-compose.yml). docs/operations.md#deployment explains both.

# Production dependencies only, in a layer of their own that changes only with the lock file.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds from sources that are not here yet; no runtime dependency needs an install script.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Build: every dependency, the TypeScript build (dist/src, dist/migrations) and the web front ends
# (the editor and the dashboard), an npm package of their own (web/build.mjs runs `npm ci` in web/,
# then Vite into dist/web). The dashboard's API types come from client/src.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY web/package.json web/package-lock.json ./web/
RUN cd web && npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY client/src ./client/src
COPY web ./web
RUN npm run build && npm run build:web -- --force

# Runtime: Node, the production dependencies and dist/, as the unprivileged `node` user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
# V8 otherwise lets the heap grow to several times its live data (about 50 MiB at 500 messages/s)
# before collecting; the cap keeps the process near 200 MiB. Raise it with the container's memory.
ENV NODE_OPTIONS=--max-old-space-size=384
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/migrations ./dist/migrations
COPY --from=build /app/dist/web ./dist/web
COPY package.json ./
COPY bin ./bin
# DATA_DIR: the embedded database when DATABASE_URL is unset, and the generated editor token secret
# when EDITOR_TOKEN_SECRET is unset. Mount a volume there to keep them.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# Alive: the process answers /healthz (every role serves it). Not /readyz: a process catching up on
# a long log is healthy, only not ready, and an orchestrator restarting it would never let it finish.
# No curl in the slim image: Node's fetch.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `docker run IMAGE bootstrap --organization …`, `… migrate`, `… start --role api`: any flowd command.
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["start"]
