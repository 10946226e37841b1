# explorer-gateway container image.
#   docker build -t explorer-gateway .
#   docker run -p 8080:8080 -e DEMO_API_KEY=... -v egw-data:/home/node/data \
#     -v "$PWD/config/gateway.yaml:/etc/explorer-gateway/gateway.yaml:ro" explorer-gateway
# The configuration is read from /etc/explorer-gateway/gateway.yaml (GATEWAY_CONFIG); mount
# yours there. SIGHUP reloads it; SIGTERM drains requests in flight and exits 0.
# Listeners of the default config: the public API on 8080 (0.0.0.0) and the operations listener
# (/metrics, /healthz, /readyz with every check) on 9090, bound to 0.0.0.0 here (METRICS_HOST) so
# that a Prometheus in the same network can scrape it; the admin API stays on 127.0.0.1:9091,
# never exposed. deploy/ runs it with Redis, PostgreSQL, Prometheus and Grafana
# (docs/deployment.md).
# test/container/dockerfile.test.ts replays these steps without a Docker engine.

# 1. Compile TypeScript with the full dependency set. better-sqlite3 (the embedded store) is a
#    native addon: its install script fetches a prebuilt binary for this Node and platform, and
#    when none can be fetched (no such build, or the build host reaches only the npm registry) it
#    builds from source with node-gyp, which needs python3, make and g++, and Node's headers:
#    npm_config_nodedir points node-gyp at the ones the node image carries (/usr/local/include/node)
#    instead of downloading them.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm_config_nodedir="$(node -p 'require("path").resolve(process.execPath, "../..")')" npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# npm run build copies src/'s Lua scripts and SQL migrations beside the compiled code (dist/).
COPY scripts/copy-assets.js ./scripts/
COPY src ./src
RUN npm run build

# 2. Production dependencies only: the build's node_modules pruned (the addon is not built twice).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
RUN npm prune --omit=dev --no-audit --no-fund

# 3. The runtime: compiled code, production dependencies, a default config, a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
ENV GATEWAY_CONFIG=/etc/explorer-gateway/gateway.yaml
# The embedded store (run-time keys, bought credits, spend, usage) when no Redis is configured:
# in the node user's home, which it may write. Mount a volume there to keep it.
ENV GATEWAY_DATA=/home/node/data/gateway.db
# The operations listener on every interface of the container, for a scraper in its network
# (config/gateway.yaml reads metrics.host from METRICS_HOST, 127.0.0.1 elsewhere). It shows key
# names and their spend: publish it to no public network, or mount a config with metrics.token.
ENV METRICS_HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config/gateway.yaml /etc/explorer-gateway/gateway.yaml
USER node
# The public API and the operations listener; never the admin listener (127.0.0.1:9091).
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
