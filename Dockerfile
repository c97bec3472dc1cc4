# Node 22 LTS. The bases are named by tag; scripts/pin-images.md says how a release pins each
# to its digest (FROM image:tag@sha256:...), which is what a signed release builds from.
ARG NODE_BUILD_IMAGE=node:22-bookworm-slim
ARG NODE_RUNTIME_IMAGE=gcr.io/distroless/nodejs22-debian12:nonroot

# Build stage: compile TypeScript with the dev dependencies.
FROM ${NODE_BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, installed where npm exists (the final stage has none).
FROM ${NODE_BUILD_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# Runtime stage: distroless Node 22, no shell, no package manager, non-root (65532).
FROM ${NODE_RUNTIME_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=runtime-deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
COPY config ./config
USER 65532:65532
EXPOSE 8888 9090
# The admin listener answers /healthz on 127.0.0.1:9090 by default (no shell: node itself asks).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:9090/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A larger young generation: every request allocates a few hundred KiB that die at once (bench: filter vs echo 0.29 → 0.35 at 5,000 names).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=32", "dist/cli.js"]
CMD ["serve"]
