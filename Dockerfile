# explorer-gateway container image.
#   docker build -t explorer-gateway .
#   docker run -p 8080:8080 -e DEMO_API_KEY=... \
#     -v "$PWD/config/gateway.yaml:/etc/explorer-gateway/gateway.yaml:ro" explorer-gateway
# The configuration is read from /etc/explorer-gateway/gateway.yaml (GATEWAY_CONFIG); mount
# yours there. SIGHUP reloads it; SIGTERM drains requests in flight and exits 0.
# test/container/dockerfile.test.ts replays these steps without a Docker engine.

# 1. Compile TypeScript with the full dependency set.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# 2. Production dependencies only.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# 3. The runtime: compiled code, production dependencies, a default config, a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
ENV GATEWAY_CONFIG=/etc/explorer-gateway/gateway.yaml
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config/gateway.yaml /etc/explorer-gateway/gateway.yaml
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
