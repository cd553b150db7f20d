# authsvc's container image (docs/container.md).
#
#   docker build -t authsvc .
#   docker run --read-only --tmpfs /tmp -v authsvc-data:/data -p 9999:9999 authsvc      # embedded database
#   docker run --read-only --tmpfs /tmp -p 9999:9999 -e DATABASE_URL=postgres://… authsvc  # a Postgres server
#
# The build stage needs Node with npm; the runtime stage is plain Debian with the build stage's
# node binary copied in (a Node slim image alone is ~225 MB; this one stays under 250 MB).
# Both bases are build arguments, so the image can be built from local bases (the test does).
ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# The dev dependencies build dist/node (esbuild); `prepare` needs the sources, so it runs after COPY.
RUN npm ci --ignore-scripts
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY drizzle ./drizzle
COPY migrations ./migrations
COPY tsconfig.json ./
RUN npm run build \
  # What dist/node still imports at run time (build-node.mjs EXTERNAL), and nothing else.
  && mkdir -p /runtime/node_modules/@node-rs /runtime/node_modules/@electric-sql \
  && cp -a node_modules/@node-rs/. /runtime/node_modules/@node-rs/ \
  && cp -a node_modules/@electric-sql/pglite /runtime/node_modules/@electric-sql/ \
  && cp -a node_modules/nodemailer /runtime/node_modules/ \
  # Not loaded at run time: source maps and type declarations of those packages, PGlite's CommonJS
  # build and its extension archives (authsvc loads no extension).
  && find /runtime/node_modules \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \) -delete \
  && find /runtime/node_modules/@electric-sql/pglite/dist \( -name '*.cjs' -o -name '*.tar.gz' \) -delete \
  && mkdir -p /runtime/scripts /runtime/src/adapters \
  && cp -a bin dist migrations package.json /runtime/ \
  && cp -p scripts/build-node.mjs scripts/malloc-trim.mjs scripts/stack-traces.mjs scripts/healthcheck.mjs /runtime/scripts/ \
  && cp -p src/adapters/pglite-initdb-worker.mjs /runtime/src/adapters/ \
  && mkdir -p /runtime-bin && cp "$(command -v node)" /runtime-bin/node

FROM ${RUNTIME_IMAGE}
COPY --from=build /runtime-bin/node /usr/local/bin/node
COPY --from=build /runtime /app
RUN mkdir -p /data && chown 10001:10001 /data
# The embedded database (local mode: ./.authsvc, so /data/.authsvc) lives on this volume; with
# DATABASE_URL=postgres://… nothing is written anywhere but /tmp.
VOLUME /data
WORKDIR /data
# GoTrue's default port; any of PORT, GOTRUE_API_PORT or AUTHSVC_API_PORT set at run time wins.
ENV PORT=9999 \
    NODE_ENV=production \
    HOME=/tmp \
    # The launcher's malloc setting (scripts/malloc-trim.mjs), set here so it need not re-exec.
    GLIBC_TUNABLES=glibc.malloc.trim_threshold=1048576
EXPOSE 9999
USER 10001:10001
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "/app/scripts/healthcheck.mjs"]
STOPSIGNAL SIGTERM
# Exec form, node itself as pid 1: SIGTERM reaches the server, which finishes in-flight requests
# and exits 0 (npm start would exit 1, a shell form would be killed after the stop timeout).
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=25", "--no-concurrent-recompilation", "/app/bin/authsvc.js"]
