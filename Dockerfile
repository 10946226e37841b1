# explorer-gateway container image.
#   docker build -t explorer-gateway .
#   docker run -p 8080:8080 -e DEMO_API_KEY=... -v egw-data:/home/node/data \
#     -v "$PWD/config/gateway.yaml:/etc/explorer-gateway/gateway.yaml:ro" explorer-gateway
# The configuration is read from /etc/explorer-gateway/gateway.yaml (GATEWAY_CONFIG); mount
# yours there. SIGHUP reloads it; SIGTERM drains requests in flight and exits 0.
# test/container/dockerfile.test.ts replays these steps without a Docker engine.

# 1. Compile TypeScript with the full dependency set. better-sqlite3 (the embedded store) is a
#    native addon: npm fetches its prebuilt binary for this Node and platform, or builds it (then
#    the stage needs python3, make and g++: apt-get install -y python3 make g++).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
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
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config/gateway.yaml /etc/explorer-gateway/gateway.yaml
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
