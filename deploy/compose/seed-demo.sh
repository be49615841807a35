#!/bin/sh
# docker compose one-shot: create the demo tenant with its Account Admin (idempotent: an
# existing tenant is left as it is), then say how to sign in. Runs in the token-service image.
# The demo's Account Admins need no second factor (--admin-factor optional): development only;
# every other tenant requires one unless its operator says otherwise (README).
set -eu
: "${DEMO_TENANT:?}" "${DEMO_ADMIN_EMAIL:?}" "${DEMO_ADMIN_PASSWORD:?}" "${PORTAL_URL:?}"

# The password goes in on standard input, as in production (docs/deploy.md): never an argument.
if out=$(printf '%s' "$DEMO_ADMIN_PASSWORD" | node dist/cli.js tenant create "$DEMO_TENANT" --admin-email "$DEMO_ADMIN_EMAIL" --admin-password-file - --admin-factor optional 2>&1); then
  echo "seed: created tenant $DEMO_TENANT: $out"
else
  case "$out" in
    *"already exists"*) echo "seed: tenant $DEMO_TENANT already exists; left unchanged" ;;
    *) echo "seed: failed: $out" >&2; exit 1 ;;
  esac
fi

cat <<MSG

  ------------------------------------------------------------------
  Plant Store is up.
    Portal (sign in):  ${PORTAL_URL}/login?tenant=${DEMO_TENANT}
      email:           ${DEMO_ADMIN_EMAIL}
      password:        ${DEMO_ADMIN_PASSWORD}   (development only)
    Plant Store API:   http://localhost:8081
    Token service:     ${AUTH_URL:-http://localhost:8082}/realms/${DEMO_TENANT}
  ------------------------------------------------------------------

MSG
