#!/usr/bin/env bash
# One login role per service, each limited to its own schema: it owns that schema (so its
# migrations can create tables there), cannot create schemas, cannot use `public`, and has
# no access to the other services' schemas.
#
# docker compose mounts this into /docker-entrypoint-initdb.d: the Postgres image runs it
# once, when the data volume is new, with POSTGRES_USER and POSTGRES_DB set. It also runs
# by hand against any server: PGHOST=... POSTGRES_USER=... POSTGRES_DB=... ./init-roles.sh
#
# Passwords come from the environment (compose passes development-only values).
# Role names can be overridden (tests use unique ones on a shared server).
set -euo pipefail

: "${POSTGRES_DB:?names the database}"
: "${PLANT_STORE_DB_PASSWORD:?is required}"
: "${TOKEN_SERVICE_DB_PASSWORD:?is required}"
: "${ACCOUNT_ADMIN_DB_PASSWORD:?is required}"

psql -v ON_ERROR_STOP=1 -q --username "${POSTGRES_USER:-postgres}" --dbname "$POSTGRES_DB" \
  -v db="$POSTGRES_DB" \
  -v plant_store_role="${PLANT_STORE_DB_ROLE:-plant_store}" -v plant_store_pw="$PLANT_STORE_DB_PASSWORD" \
  -v token_service_role="${TOKEN_SERVICE_DB_ROLE:-token_service}" -v token_service_pw="$TOKEN_SERVICE_DB_PASSWORD" \
  -v account_admin_role="${ACCOUNT_ADMIN_DB_ROLE:-account_admin}" -v account_admin_pw="$ACCOUNT_ADMIN_DB_PASSWORD" <<'SQL'
-- Nobody but the roles granted below connects, and nobody creates objects in public.
revoke all on database :"db" from public;
revoke all on schema public from public;

create role :"plant_store_role" login password :'plant_store_pw';
grant connect on database :"db" to :"plant_store_role";
create schema plants authorization :"plant_store_role";
alter role :"plant_store_role" in database :"db" set search_path = plants;

create role :"token_service_role" login password :'token_service_pw';
grant connect on database :"db" to :"token_service_role";
create schema auth authorization :"token_service_role";
alter role :"token_service_role" in database :"db" set search_path = auth;

create role :"account_admin_role" login password :'account_admin_pw';
grant connect on database :"db" to :"account_admin_role";
create schema admin authorization :"account_admin_role";
alter role :"account_admin_role" in database :"db" set search_path = admin;
SQL
echo "init-roles: roles for plant-store (schema plants), token-service (auth), account-admin (admin) created in $POSTGRES_DB"
