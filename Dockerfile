# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies only, non-root.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
USER 65532:65532
EXPOSE 8888 9090
# The admin listener answers /healthz on 127.0.0.1:9090 by default.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9090/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A larger young generation: every request allocates a few hundred KiB that die at once (bench: filter vs echo 0.29 → 0.35 at 5,000 names).
ENTRYPOINT ["node", "--max-semi-space-size=32", "dist/cli.js"]
CMD ["serve"]
