#!/usr/bin/env bash
# Pieces of scripts/docker-smoke.sh, sourced by it (they use its globals and helpers: WORK,
# BASE_IMAGE, NODE_VERSION, dk, say, fail).

# A base image of the pinned Node from a debootstrapped Debian root plus the node binary on PATH
# (scripts/pinned-node.mjs's) and this machine's CA bundle, when the daemon does not hold it yet
# (offline from Docker Hub). Like the official image it carries npm and corepack (the build
# stage installs pnpm with npm): beside that node when it came from a tarball; the registry's
# Node package has neither, so then the machine's npm and the corepack pinned-node.mjs installed.
make_base_image() {
  if ! dk image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    ROOTFS="$WORK/rootfs-bookworm"
    if [ ! -x "$ROOTFS/bin/sh" ]; then
      # The host's own Debian mirror (the one apt uses here).
      MIRROR=$(grep -h -m1 -oE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | head -1)
      [ -n "$MIRROR" ] || MIRROR=$(grep -h -m1 -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1)
      [ -n "$MIRROR" ] || fail "no Debian mirror found in the apt sources"
      say "debootstrap bookworm (minbase) from $MIRROR"
      rm -rf "$ROOTFS.tmp"
      debootstrap --variant=minbase bookworm "$ROOTFS.tmp" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
        { tail -n 20 "$WORK/debootstrap.log" >&2; fail "debootstrap failed"; }
      rm -rf "$ROOTFS.tmp/var/cache/apt/archives/"*.deb "$ROOTFS.tmp/var/lib/apt/lists/"*
      mv "$ROOTFS.tmp" "$ROOTFS"
    fi
    say "assembling $BASE_IMAGE from the host's node $NODE_VERSION"
    STAGE="$WORK/base-stage"
    rm -rf "$STAGE" && cp -a "$ROOTFS" "$STAGE"
    NODE_BIN=$(readlink -f "$(command -v node)")
    NODE_LIB=$(dirname "$(dirname "$NODE_BIN")")/lib/node_modules
    install -m 0755 "$NODE_BIN" "$STAGE/usr/local/bin/node"
    mkdir -p "$STAGE/usr/local/lib/node_modules" "$STAGE/etc/ssl/certs"
    local npm_dir="$NODE_LIB/npm" corepack_dir="$NODE_LIB/corepack"
    [ -d "$npm_dir" ] || npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
    [ -d "$corepack_dir" ] || corepack_dir="$ROOT/.tools/node/${NODE_VERSION#v}/node_modules/corepack"
    [ -f "$npm_dir/bin/npm-cli.js" ] || fail "no npm to put in the base image ($npm_dir)"
    [ -f "$corepack_dir/dist/corepack.js" ] || fail "no corepack to put in the base image ($corepack_dir)"
    cp -a "$npm_dir" "$corepack_dir" "$STAGE/usr/local/lib/node_modules/"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$STAGE/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$STAGE/usr/local/bin/npx"
    ln -sf ../lib/node_modules/corepack/dist/corepack.js "$STAGE/usr/local/bin/corepack"
    cp /etc/ssl/certs/ca-certificates.crt "$STAGE/etc/ssl/certs/ca-certificates.crt"
    # The official images' user: uid/gid 1000 named node.
    chroot "$STAGE" /usr/sbin/groupadd --gid 1000 node
    chroot "$STAGE" /usr/sbin/useradd --uid 1000 --gid node --shell /bin/bash --create-home node
    tar -C "$STAGE" -c . | dk import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
      --change 'CMD ["node"]' - "$BASE_IMAGE" >/dev/null
    rm -rf "$STAGE"
  fi
}

# $1 service, $2 its public port, $3 its management port: /readyz turns ready and /metrics is
# served on the management port, and the public port answers each management path 404 in the
# Error shape (it no longer routes them).
check_listeners() {
  local ready="" metrics="" answer="" path
  for _ in $(seq 1 30); do
    ready=$(curl -sS "http://127.0.0.1:$3/readyz" 2>&1) && grep -q '"status":"ready"' <<<"$ready" && break
    sleep 1
  done
  grep -q '"status":"ready"' <<<"$ready" || fail "$1 /readyz on $3: $ready"
  metrics=$(curl -fsS "http://127.0.0.1:$3/metrics") || fail "$1 /metrics on $3 did not answer"
  grep -q '^nodejs_heap_size_used_bytes' <<<"$metrics" || fail "$1 /metrics on $3 exposes no Node metrics"
  # The public port no longer routes them: each is a 404 in the Error shape there.
  for path in /metrics /healthz /readyz; do
    answer=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$2$path")
    [ "$answer" = "{\"error\":404,\"message\":\"No route for GET $path\"} 404" ] || fail "$1 public port $2 answered $path with: $answer"
  done
  say "$1: /readyz ready and /metrics served on $3; the public port $2 answers them 404"
}
