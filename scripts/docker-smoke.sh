#!/usr/bin/env bash
# Real image builds, offline from Docker Hub: start Debian's dockerd by hand, make a base image
# of the pinned Node (.nvmrc) from a debootstrapped Debian root plus that node binary (the one
# scripts/pinned-node.mjs obtained) and this machine's CA bundle,
# build every service's image on it (the root Dockerfile's target of each, NODE_IMAGE build
# argument), run the migrations as the image's separate command, run each container with
# --network host against the local Postgres and Redis on ports of its own, and check /healthz and
# /readyz on its management port, that its public port answers /metrics, /healthz and /readyz 404,
# and the image's HEALTHCHECK.
#
# Needs root (dockerd). Installs docker.io and debootstrap from Debian when missing.
# If the daemon cannot start this says so loudly and exits 1, unless SKIP_DOCKER_SMOKE=1.
#
# Environment (all optional):
#   SKIP_DOCKER_SMOKE=1       a daemon that cannot start is a warning, not a failure
#   SMOKE_SERVICES            services to check (default: plant-store token-service account-admin)
#   SMOKE_WORK_DIR            daemon data root, socket, base root fs (default /var/tmp/plant-docker-smoke;
#                             kept between runs as a build cache)
#   SMOKE_PG_URL              admin URL of the local Postgres (default postgres://postgres@127.0.0.1:5432/postgres)
#   SMOKE_REDIS_URL           default redis://127.0.0.1:6379
# The containers listen on free ephemeral ports picked at run time, so they clash with
# nothing else on this machine (other engineers' services, CI).
set -euo pipefail
# The whole script is one function, read before it runs: editing the file during a run
# cannot shift what bash executes next.
main() {
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# make_base_image, check_listeners: read now, like the rest of this function.
# shellcheck source=scripts/docker-smoke-lib.sh
. "$ROOT/scripts/docker-smoke-lib.sh"

SERVICES=(${SMOKE_SERVICES:-plant-store token-service account-admin})
WORK=${SMOKE_WORK_DIR:-/var/tmp/plant-docker-smoke}
PG_ADMIN_URL=${SMOKE_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
REDIS_URL=${SMOKE_REDIS_URL:-redis://127.0.0.1:6379}
SOCK="$WORK/docker.sock"
RUN_ID="$(date +%s)-$$"
SMOKE_DB="plantstore_smoke_${RUN_ID//-/_}"
# The pinned Node (.nvmrc), whatever the machine's own is: `npm run test:all` has it first on
# PATH already; run alone, this puts it there.
PATH="$(node "$ROOT/scripts/pinned-node.mjs"):$PATH"
NODE_VERSION=$(node --version)
[ "$NODE_VERSION" = "v$(cat "$ROOT/.nvmrc")" ] || { echo "node $NODE_VERSION is not .nvmrc's" >&2; exit 1; }
BASE_IMAGE="plant-smoke/node-base:${NODE_VERSION#v}"

say() { printf '== docker-smoke: %s\n' "$*"; }
# The daemon (or its prerequisites) is unavailable: loud, and fatal unless explicitly skipped.
unavailable() {
  {
    echo
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!! DOCKER SMOKE TEST NOT RUN: $*"
    if [ "${SKIP_DOCKER_SMOKE:-0}" = "1" ]; then
      echo "!! No image was built or started. SKIP_DOCKER_SMOKE=1: exiting 0 anyway."
    else
      echo "!! No image was built or started. Set SKIP_DOCKER_SMOKE=1 to accept this."
    fi
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  } >&2
  if [ "${SKIP_DOCKER_SMOKE:-0}" = "1" ]; then exit 0; fi
  exit 1
}
fail() { echo "docker-smoke: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = "0" ] || unavailable "dockerd must be started as root (running as uid $(id -u))"

# --- tools ---------------------------------------------------------------------------------
need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  say "installing from Debian: ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } ||
    unavailable "could not install ${need[*]} from Debian"
fi
# Debian's client matches Debian's daemon; the legacy builder needs no buildx plugin and
# never pulls a frontend image.
DOCKER_BIN=/usr/bin/docker
[ -x "$DOCKER_BIN" ] || DOCKER_BIN=$(command -v docker) || unavailable "no docker client"
export DOCKER_BUILDKIT=0
dk() { "$DOCKER_BIN" -H "unix://$SOCK" "$@"; }

# --- daemon ----------------------------------------------------------------------------------
mkdir -p "$WORK"
DOCKERD_PID=""
CONTAINERS=()
cleanup() {
  local code=$?
  set +e
  for c in "${CONTAINERS[@]}"; do dk rm -f "$c" >/dev/null 2>&1; done
  if [ -n "$DOCKERD_PID" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
    kill "$DOCKERD_PID"
    for _ in $(seq 1 30); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
  fi
  psql "$PG_ADMIN_URL" -qAt -c "drop database if exists \"$SMOKE_DB\" with (force)" >/dev/null 2>&1
  exit $code
}
trap cleanup EXIT

if [ -S "$SOCK" ] && dk info >/dev/null 2>&1; then
  say "reusing the daemon already listening on $SOCK"
else
  rm -f "$SOCK" "$WORK/dockerd.pid"
  say "starting dockerd (data root $WORK/data, socket $SOCK)"
  dockerd --iptables=false --ip6tables=false --bridge=none \
    --data-root "$WORK/data" --exec-root "$WORK/exec" --pidfile "$WORK/dockerd.pid" \
    -H "unix://$SOCK" >"$WORK/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 60); do
    dk info >/dev/null 2>&1 && break
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  if ! dk info >/dev/null 2>&1; then
    tail -n 20 "$WORK/dockerd.log" >&2 || true
    unavailable "dockerd did not start (log: $WORK/dockerd.log)"
  fi
fi
say "daemon up: $(dk version --format 'server {{.Server.Version}}')"
# The data root is a build cache across runs; drop what no recent run used.
dk image prune -f --filter until=24h >/dev/null 2>&1 || true

# --- local Node base image -------------------------------------------------------------------
make_base_image
dk run --rm --network host "$BASE_IMAGE" node -e 'console.log("base image node", process.version)'

# --- images ------------------------------------------------------------------------------------
for svc in "${SERVICES[@]}"; do
  say "building plant-smoke/$svc"
  dk build --network host --build-arg "NODE_IMAGE=$BASE_IMAGE" \
    --target "$svc" -t "plant-smoke/$svc" . >"$WORK/build-$svc.log" 2>&1 ||
    { tail -n 40 "$WORK/build-$svc.log" >&2; fail "image build of $svc (log: $WORK/build-$svc.log)"; }
  uid=$(dk run --rm --network host "plant-smoke/$svc" id -u)
  [ "$uid" != "0" ] || fail "$svc runs as root"
  [ "$(dk image inspect -f '{{.Config.Env}}' "plant-smoke/$svc" | grep -c 'NODE_ENV=production')" = "1" ] || fail "$svc lacks NODE_ENV=production"
  say "$svc: built, runs as uid $uid"
done

# --- run them against the local Postgres and Redis -------------------------------------------
psql "$PG_ADMIN_URL" -qAt -c "create database \"$SMOKE_DB\"" >/dev/null
DB_URL="${PG_ADMIN_URL%/*}/$SMOKE_DB"
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
declare -A PORTS MANAGEMENT_PORTS
for svc in plant-store token-service account-admin; do PORTS[$svc]=$(free_port); MANAGEMENT_PORTS[$svc]=$(free_port); done
INTERNAL_PORT=$(free_port)
port_of() { echo "${PORTS[$1]}"; }
management_port_of() { echo "${MANAGEMENT_PORTS[$1]}"; }
# Secrets of this throwaway run: random, as strong as the images' NODE_ENV=production requires.
secret() { head -c 32 /dev/urandom | base64 | tr -d '\n'; }
COMMON_ENV=(
  -e "DATABASE_URL=$DB_URL" -e "REDIS_URL=$REDIS_URL" -e HOST=127.0.0.1 -e LOG_LEVEL=info
  -e "AUTH_URL=http://localhost:$(port_of token-service)"
  -e "TOKEN_SERVICE_INTERNAL_URL=http://127.0.0.1:$INTERNAL_PORT"
  -e "PORTAL_URL=http://localhost:$(port_of account-admin)"
  -e "PUBLIC_URL=http://localhost:$(port_of plant-store)"
  -e "SECRET_PEPPER=$(secret)"
  -e "KEY_ENCRYPTION_KEY=$(secret)"
  -e "COOKIE_KEYS=$(secret)"
  -e "SESSION_SECRET=$(secret)"
  -e "INTERNAL_PORT=$INTERNAL_PORT"
)
# The internal API: one credential per caller, each only in its own container (the token service knows both).
PLANT_STORE_INTERNAL_TOKEN=$(secret)
ACCOUNT_ADMIN_INTERNAL_TOKEN=$(secret)
own_env() {
  case "$1" in
    token-service) echo "-e RESOURCE_SERVER_TOKENS=$PLANT_STORE_INTERNAL_TOKEN -e ACCOUNT_ADMIN_TOKEN=$ACCOUNT_ADMIN_INTERNAL_TOKEN" ;;
    plant-store) echo "-e INTERNAL_API_TOKEN=$PLANT_STORE_INTERNAL_TOKEN" ;;
    account-admin) echo "-e INTERNAL_API_TOKEN=$ACCOUNT_ADMIN_INTERNAL_TOKEN" ;;
  esac
}
# The token service first: the resource servers load its revocation snapshot.
ORDERED=()
for svc in token-service plant-store account-admin; do
  for s in "${SERVICES[@]}"; do [ "$s" = "$svc" ] && ORDERED+=("$svc"); done
done
for svc in "${ORDERED[@]}"; do
  say "$svc: migrations (node dist/migrate.js, a separate command of the image)"
  dk run --rm --network host "${COMMON_ENV[@]}" "plant-smoke/$svc" node dist/migrate.js ||
    fail "$svc migrations"
  name="plant-smoke-$svc-$RUN_ID"
  port=$(port_of "$svc")
  mport=$(management_port_of "$svc")
  for p in "$port" "$mport" $([ "$svc" = token-service ] && echo "$INTERNAL_PORT"); do
    ! port_in_use "$p" || fail "port $p is taken by another process; cannot check $svc there"
  done
  # MANAGEMENT_HOST stays at its loopback default: with --network host that is this machine's.
  # shellcheck disable=SC2046 # own_env's words are -e NAME=value pairs of base64 (no spaces, no globs).
  dk run -d --name "$name" --network host "${COMMON_ENV[@]}" $(own_env "$svc") -e "PORT=$port" -e "MANAGEMENT_PORT=$mport" "plant-smoke/$svc" >/dev/null
  CONTAINERS+=("$name")
  ok=""
  for _ in $(seq 1 60); do
    [ "$(dk inspect -f '{{.State.Running}}' "$name")" = "true" ] || break
    # Our container's own "listening" line (both ports), then /healthz on its management port.
    if dk logs "$name" 2>&1 | grep '"msg":"listening"' | grep "\"port\":$port[,}]" | grep -q "\"managementPort\":$mport[,}]" &&
      curl -fsS "http://127.0.0.1:$mport/healthz" >/dev/null 2>&1; then ok=1; break; fi
    sleep 1
  done
  if [ -z "$ok" ]; then
    dk logs "$name" 2>&1 | tail -n 30 >&2
    fail "$svc did not answer /healthz on its management port $mport"
  fi
  say "$svc: /healthz answers on management port $mport: $(curl -fsS "http://127.0.0.1:$mport/healthz")"
  check_listeners "$svc" "$port" "$mport"
done
if printf '%s\n' "${ORDERED[@]}" | grep -qx token-service; then
  # compose's seed one-shot, as compose runs it (the token-service image, the script mounted),
  # twice: the second run must find the tenant and still print the sign-in.
  tenant="smoke-$$"
  seed() {
    dk run --rm --network host "${COMMON_ENV[@]}" -v "$ROOT/deploy/compose/seed-demo.sh:/seed/seed-demo.sh:ro" \
      -e "DEMO_TENANT=$tenant" -e DEMO_ADMIN_EMAIL=admin@smoke.example -e DEMO_ADMIN_PASSWORD=smoke-password-not-a-secret \
      plant-smoke/token-service sh /seed/seed-demo.sh
  }
  first=$(seed) || fail "the seed script in the token-service image: $first"
  again=$(seed) || fail "the seed script's second run: $again"
  grep -q "seed: created tenant $tenant" <<<"$first" || fail "the seed did not create $tenant: $first"
  grep -q "seed: tenant $tenant already exists" <<<"$again" || fail "the second seed run did not find $tenant: $again"
  grep -q "/login?tenant=$tenant" <<<"$again" || fail "the seed did not print the sign-in URL: $again"
  say "seed script: created $tenant, idempotent, prints: $(grep -m1 'login?tenant=' <<<"$again" | sed 's/^ *//')"
fi
# The images' own HEALTHCHECK (node + fetch) must turn healthy too.
for svc in "${ORDERED[@]}"; do
  name="plant-smoke-$svc-$RUN_ID"
  status=""
  for _ in $(seq 1 45); do
    status=$(dk inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$name")
    [ "$status" = "healthy" ] && break
    [ "$status" = "none" ] && break
    sleep 2
  done
  if [ "$status" != "healthy" ]; then
    dk inspect -f '{{json .State}}' "$name" >&2
    dk logs "$name" 2>&1 | tail -n 30 >&2
    fail "$svc HEALTHCHECK is $status"
  fi
  say "$svc: HEALTHCHECK healthy"
done
for svc in "${ORDERED[@]}"; do
  name="plant-smoke-$svc-$RUN_ID"
  dk stop -t 20 "$name" >/dev/null
  code=$(dk inspect -f '{{.State.ExitCode}}' "$name")
  [ "$code" = "0" ] || { dk logs "$name" 2>&1 | tail -n 20 >&2; fail "$svc exited $code on SIGTERM (expected a drain and 0)"; }
  say "$svc: stopped cleanly on SIGTERM"
done
say "OK: ${ORDERED[*]}"
}
main "$@"
