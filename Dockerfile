# syntax=docker/dockerfile:1
#
# Sediment's container image: a static binary on a distroless base, run as
# a non-root user, data in the /data volume.
#
#   docker build -t sediment:local \
#     --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse --short HEAD) .
#   docker run -p 4000:4000 -v sediment-data:/data sediment:local
#
# Every `serve` flag can be set by its SEDIMENT_* variable, and Logflare's
# variables (LOGFLARE_PUBLIC_ACCESS_TOKEN, ...) work as in Supabase.

FROM golang:1.26-alpine AS build
WORKDIR /src
# Modules first, so that a change to the sources reuses this layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
# CGO off: a static binary that needs no libc. The build arguments name
# the version and commit `sediment version` and /health report (the image
# has no .git to read them from).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/sediment ./cmd/sediment \
 && mkdir -p /out/data

# distroless static: CA certificates and tzdata, no shell, no package
# manager; the nonroot variant runs as uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sediment /sediment
# A new named volume takes the ownership of the image's /data, so the
# non-root user can write it. A bind mount keeps the host's ownership:
# chown it to 65532:65532 first.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV SEDIMENT_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 4000
# The image has no wget or curl: the binary probes its own /health (on the
# port SEDIMENT_LISTEN or PHX_HTTP_PORT names, else 4000).
HEALTHCHECK --interval=5s --timeout=5s --start-period=10s --retries=10 \
  CMD ["/sediment", "health", "--quiet"]
ENTRYPOINT ["/sediment"]
CMD ["serve"]
