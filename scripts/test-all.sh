#!/usr/bin/env bash
# `npm run test:all` (or `bash scripts/test-all.sh`): everything CI runs, on a fresh machine.
# Runs on the pinned Node (.nvmrc, from the npm registry when the machine's is another one).
# Installs what the suite needs (Postgres, Redis, nginx, Redis Sentinel, PgBouncer, promtool and Chromium
# from Debian when missing, the npm dependencies), starts Postgres and Redis when they do not
# answer, builds, type-checks, runs the whole suite (`pnpm test`), the topologies (`pnpm
# test:topology`: replicas behind nginx, Sentinel, PgBouncer, each test starting its own
# servers on loopback ports of its own), then the docker smoke. `.ci/run` calls exactly this.
# Needs root for apt-get and to start the servers; on a machine already set up, `pnpm test` is
# the quick loop.
set -euo pipefail
cd "$(dirname "$0")/.."

# corepack's signature check fails against some registry mirrors; the version is pinned below.
export COREPACK_INTEGRITY_KEYS=${COREPACK_INTEGRITY_KEYS:-0}
# Everything below runs on the pinned Node (.nvmrc), whatever the machine's own is: obtained from
# the npm registry into .tools/node/<version>/ once (scripts/pinned-node.mjs), its bin directory
# (node, and corepack and pnpm shims on it) first on PATH, so pnpm, jest, the services the tests
# spawn (process.execPath) and the docker smoke's base image all use it.
PATH="$(node scripts/pinned-node.mjs):$PATH"
export PATH
[ "$(node --version)" = "v$(cat .nvmrc)" ] || { echo "node $(node --version) is not .nvmrc's $(cat .nvmrc)" >&2; exit 1; }
PNPM_VERSION=$(node -p "require('./package.json').packageManager.split('@')[1]")

echo "== toolchain: node $(node --version), pnpm ${PNPM_VERSION}"
corepack pnpm --version

need_apt=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# The topologies (packages/topology) run Debian's own: an ingress, a Sentinel quorum, a pooler.
[ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v redis-sentinel >/dev/null 2>&1 || need_apt+=(redis-sentinel)
[ -x /usr/sbin/pgbouncer ] || need_apt+=(pgbouncer)
# promtool checks and unit-tests the alert rules (packages/deploy-checks/test/observability.test.ts).
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
if [ "${PLANT_BROWSER_TESTS:-1}" = "1" ] && [ ! -x /usr/bin/chromium ]; then need_apt+=(chromium); fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing from Debian: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

echo "== services"
if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping

echo "== install (engine-strict: every package's engines must admit this Node)"
corepack pnpm install --frozen-lockfile --config.engine-strict=true

echo "== build"
corepack pnpm build

echo "== lint: type-check sources and tests"
corepack pnpm lint

echo "== test"
corepack pnpm test

echo "== topologies: replicas behind nginx, Redis with Sentinel, Postgres through PgBouncer"
corepack pnpm test:topology

echo "== docker smoke: real image builds and containers (SKIP_DOCKER_SMOKE=1 where no daemon can start)"
bash scripts/docker-smoke.sh
