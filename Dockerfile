# syntax=docker/dockerfile:1
# The ledgerops controller image: built in a Rust image, run from distroless (no shell, no package
# manager) as a non-root user. CI has no container engine: tests/tools/build-image-context.sh
# copies what the COPY lines below name into an empty directory and runs the RUN line there, so a
# workspace member left out here fails CI, as it would fail `docker build`.
#
#   docker build -t ledgerops/ledgerops:0.1.0 .

FROM rust:1.89-bookworm AS build
WORKDIR /src
# The whole workspace: cargo loads every member's manifest, even to build one package. The test
# crates and the plugin are compiled by nothing below.
COPY Cargo.toml Cargo.lock ./
COPY controller controller
COPY plugin plugin
COPY tests tests
# `ledgerops_build_info{commit}`: docker build --build-arg LEDGEROPS_COMMIT="$(git rev-parse HEAD)"
ARG LEDGEROPS_COMMIT=unknown
# The binary is copied out of the cache mount into the stage's own layer (/src), where the stage
# below takes it from.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --release --locked -p ledgerops --bin ledgerops \
 && cp target/release/ledgerops ledgerops

# The binary needs glibc, libgcc_s and OpenSSL 3 (libgit2's HTTPS; the Kubernetes and YNAB clients
# use rustls); zlib is linked in. distroless "cc" has exactly these, from the same Debian release
# as the builder, so the binary finds the glibc and OpenSSL it was linked against.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/ledgerops /usr/local/bin/ledgerops
# distroless' nonroot user; the chart's securityContext runs as the same UID.
USER 65532:65532
# glibc gives each busy thread its own malloc arena and keeps what they freed: at 10,000
# Transactions two arenas hold the controller at 205 MiB RSS instead of 263 MiB (converge bench).
ENV MALLOC_ARENA_MAX=2
# 8080: /healthz, /readyz, /metrics; 8081: the Gitea webhook (only with Gitea configured).
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/ledgerops"]
CMD ["run"]
