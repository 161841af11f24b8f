# Threadline's gateway (`threadline serve`) as a container image.
#
#   docker build -t threadline .
#   docker run -d --name threadline --init --restart unless-stopped --stop-timeout 45 \
#     -p 127.0.0.1:8787:8787 -v threadline-data:/data \
#     -v "$HOME/threadline/config.yaml:/etc/threadline/config.yaml:ro" \
#     -e THREADLINE_CONFIG=/etc/threadline/config.yaml threadline
#
# docs/deploy.md ("In a container") says what to put in the config file (the keys: a gateway on
# 0.0.0.0 refuses every request without one) and why the stop timeout is 45 s. This image was not
# built on the project's machines (they have no container engine):
# test/deploy/container-files.test.ts checks what can be checked without one.
#
# Node 24: an LTS line `engines` names (supported until April 2028), on Debian 12 (bookworm).

# --- build: compile better-sqlite3, build dist/, keep the production dependencies -------------
FROM node:24-bookworm-slim AS build
# better-sqlite3 is compiled from source here (node-gyp: python3, make, a C++ compiler); the
# runtime stage gets the compiled module and no compiler.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` script (npm run build) needs the sources, copied
# below; the one dependency that must run an install script, better-sqlite3, is built next.
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3 esbuild --build-from-source
COPY tsconfig.json tsconfig.base.json ./
COPY scripts/build-web.mjs scripts/
COPY src/ src/
RUN npm run build
# pg is an optional peer dependency (a devDependency here, for the tests): the image keeps it so
# that THREADLINE_DB=postgres://… works. Listed as a dependency for the prune only; the runtime
# stage copies the unchanged package.json from the build context.
# The compiler's intermediate files and SQLite's sources stay behind too (about 27 MB): only
# build/Release/better_sqlite3.node is loaded.
RUN npm pkg set "dependencies.pg=$(npm pkg get devDependencies.pg | tr -d '"')" \
  && npm pkg delete devDependencies.pg \
  && npm prune --omit=dev --no-audit --no-fund \
  && cd node_modules/better-sqlite3 \
  && rm -rf build/Release/obj build/Release/obj.target build/Release/.deps build/Release/sqlite3.a \
    build/Release/test_extension.node build/deps deps src \
  && cd /app \
  && node -e "new (require('better-sqlite3'))(':memory:').close(); require('pg')"

# --- runtime: node, the built code and its production dependencies ----------------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
ENV THREADLINE_HOME=/data
WORKDIR /app
COPY package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The data directory belongs to the `node` user (uid 1000), so a new named volume does too.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8787
# No curl in the slim image: node asks /healthz (200 while accepting turns, 503 while draining).
# Host 127.0.0.1 is a loopback name, which the gateway always answers to; /healthz needs no key.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# serve drains on SIGTERM (gateway.drainTimeoutSeconds, 30 s by default): give it longer than
# that to stop (docker run --stop-timeout 45, compose stop_grace_period: 45s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["serve", "--host", "0.0.0.0"]
