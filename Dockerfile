# The image of each service, one target per service. Build from the repository root (the pnpm
# workspace is the build context):
#   docker build --target plant-store   -t plant/plant-store .
#   docker build --target token-service -t plant/token-service .
#   docker build --target account-admin -t plant/account-admin .
# The same image runs the migrations as a separate one-shot command, never on a replica's start:
#   docker run --rm -e DATABASE_URL=... plant/plant-store node dist/migrate.js
#
# NODE_IMAGE is the official tag of the Node release in .nvmrc (the LTS the suite runs on); pass
# another build of it (e.g. a mirror, or a locally built base in scripts/docker-smoke.sh) with
# --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG PNPM_VERSION=10.34.8
ENV CI=true
RUN npm install --global --no-fund --no-audit --no-update-notifier pnpm@${PNPM_VERSION}
WORKDIR /workspace
# The download depends on the lockfile alone, so a source change does not download the
# dependencies again.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline
# Every service is compiled and deployed (itself and its production dependencies only) in
# this one stage, which the three targets share: built once, cached for the other two.
# pnpm 10 deploys from the shared lockfile only with injected workspace packages; setting it
# for this one command keeps the developers' symlinked workspace as it is.
RUN pnpm exec tsc -b services/plant-store services/token-service services/account-admin \
 && for service in plant-store token-service account-admin; do \
      pnpm --config.inject-workspace-packages=true --filter "@plant/$service" deploy --prod "/out/$service" || exit 1; \
      (cd "/out/$service" && rm -rf src test tsconfig.json tsconfig.tsbuildinfo pnpm-lock.yaml); \
    done

# The base's filesystem without the package managers: a service image runs `node` and nothing
# else, so npm, npx, corepack and yarn (and what a scanner finds in them) stay out. Flattened
# into one layer (FROM scratch below), so they are in no layer of the image at all.
FROM ${NODE_IMAGE} AS node-only
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx \
      /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
      /root/.npm /tmp/*

FROM scratch AS runtime
COPY --from=node-only / /
# What the base image's config set, which a copied filesystem does not carry.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV NODE_ENV=production
WORKDIR /app
# OCI labels (`pnpm release` passes the build arguments: docs/deploy.md, "Releases"); each
# target adds its title and description.
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
ARG SOURCE=unknown
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="Plant Store platform"
# Numeric, so Kubernetes' runAsNonRoot can verify it (uid 1000 is "node" in official images).
# What each target copies in stays owned by root, not writable by this user: the code is
# immutable at run time.
USER 1000:1000
# Slim images have no curl; Node has fetch. Each target sets PORT and MANAGEMENT_PORT: the
# probes are served on the management port only (the public port answers them 404), which
# listens on loopback unless MANAGEMENT_HOST opens it (a pod sets 0.0.0.0 for the kubelet).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.MANAGEMENT_PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/start.js"]

FROM runtime AS plant-store
LABEL org.opencontainers.image.title="plant-store" \
      org.opencontainers.image.description="Plant Store: the resource server of the plants API"
COPY --from=build /out/plant-store ./
ENV PORT=8081 MANAGEMENT_PORT=9181
# Its pod's (512 Mi) bound, on any host: a 256 MB old generation as Node takes in that pod, and
# 16 MB semi-spaces as the token service runs (in the pod Node would take 1 MB ones; 64 MB on a
# large host without a limit, which held 10,000 realms' keys at 356 MB of RSS). Decision 0047.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=256"
EXPOSE 8081 9181

FROM runtime AS token-service
LABEL org.opencontainers.image.title="token-service" \
      org.opencontainers.image.description="Token service: the OAuth 2 / OpenID Connect authorization server (oidc-provider)"
COPY --from=build /out/token-service ./
ENV PORT=8082 MANAGEMENT_PORT=9182
# The V8 heap its pod (768 Mi) gives it, on any host: Node sizes the heap from the memory
# limit it finds (here 16 MB semi-spaces and a 384 MB old generation; 64 MB and 4 GB on a large
# host without a limit). Written out so the bench, the suite and compose run the pod's heap;
# resize it with the limit (docs/deploy.md, "Memory"; decision 0034).
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=384"
EXPOSE 8082 9082 9182

FROM runtime AS account-admin
LABEL org.opencontainers.image.title="account-admin" \
      org.opencontainers.image.description="Account admin: the portal and the account administration API"
COPY --from=build /out/account-admin ./
ENV PORT=8083 MANAGEMENT_PORT=9183
# Its pod's (512 Mi) bound, as the Plant Store's (decision 0047).
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=256"
EXPOSE 8083 9183

# Every service's CycloneDX SBOM, from the very trees the images copy (/out/<service>, its
# production dependencies only). Built only when asked (`pnpm release` does:
# --target sbom), so a plain image build does not pay for it (after the service targets: the
# legacy builder builds every stage before the one it is asked for).
FROM build AS sbom
RUN mkdir -p /sbom \
 && for service in plant-store token-service account-admin; do \
      (cd "/out/$service" && /workspace/node_modules/.bin/cyclonedx-npm --omit dev --ignore-npm-errors \
        --output-reproducible --output-format JSON --output-file "/sbom/$service.cdx.json") || exit 1; \
    done

# Without --target a build would otherwise quietly produce the last service's image.
FROM runtime AS no-target
RUN echo 'build one service: docker build --target <plant-store|token-service|account-admin>' >&2 && exit 1
