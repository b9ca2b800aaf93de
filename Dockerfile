# syntax=docker/dockerfile:1
# Static-ish build on Debian (the `dist` profile: whole-program LTO), run as non-root on distroless.
# The image ships the binary stripped (scripts/strip-binary.sh); its symbols and line tables, for
# profiles and core dumps, are the stage `debug-symbols`:
#   docker build --target debug-symbols --output type=local,dest=symbols .
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY proto proto
COPY src src
COPY deploy/examples deploy/examples
COPY scripts/strip-binary.sh scripts/strip-binary.sh
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked \
    && scripts/strip-binary.sh target/dist/kruise-webhook /kruise-webhook /kruise-webhook.debug

FROM scratch AS debug-symbols
COPY --from=build /kruise-webhook.debug /

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /kruise-webhook /usr/local/bin/kruise-webhook
USER 65532:65532
EXPOSE 9443 9090
ENTRYPOINT ["/usr/local/bin/kruise-webhook"]
CMD ["serve", "--cert-dir", "/tmp/certs"]
