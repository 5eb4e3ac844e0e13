# stepd serve in a container: a static binary (CGO_ENABLED=0; the SQLite
# driver is pure Go), run as a non-root user (65532), with its durable
# store in the /data volume and the API on port 8083. Two variants:
#
#   docker build -t stepd --build-arg VERSION=v1.2.3 .                      # distroless: no shell (the default)
#   docker build -t stepd:shell --target shell --build-arg VERSION=v1.2.3 . # Debian slim: sh, for Command handlers
#   docker run -p 8083:8083 -v stepd-data:/data stepd
#
# Command handlers (--config "Command") and --events-command (sh -c) need
# a shell and their interpreters: use the shell variant and add what they
# run (python3, node …) in an image of your own built FROM it
# (docs/deployment.md, Packaging).
FROM golang:1.26 AS build
ARG VERSION=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/stepd ./cmd/stepd \
	&& mkdir -p /out/data

# The shell variant: Debian slim, with sh and the Debian base tools, and
# nothing else; add interpreters FROM it.
FROM debian:bookworm-slim AS shell
RUN echo 'stepd:x:65532:65532:stepd:/home/stepd:/bin/sh' >>/etc/passwd \
	&& echo 'stepd:x:65532:' >>/etc/group \
	&& mkdir -p /home/stepd && chown 65532:65532 /home/stepd
COPY --from=build /out/stepd /usr/local/bin/stepd
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /home/stepd
# Listen on every interface of the container; requests must still be
# addressed to a loopback host (as from docker run -p on this machine)
# unless STEPD_ALLOW_HOSTS or STEPD_ACCESS_KEYS say otherwise.
ENV STEPD_ADDR=0.0.0.0:8083 STEPD_DATA=/data
VOLUME /data
EXPOSE 8083
# stepd health asks the server's /readyz (on 127.0.0.1:8083 here).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["stepd", "health"]
ENTRYPOINT ["stepd"]
CMD ["serve"]

# The default: distroless, no shell. The last stage, so a build without
# --target makes it.
FROM gcr.io/distroless/static-debian12:nonroot AS distroless
COPY --from=build /out/stepd /stepd
# The store's directory belongs to the image's non-root user (65532).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Listen on every interface of the container; requests must still be
# addressed to a loopback host (as from docker run -p on this machine)
# unless STEPD_ALLOW_HOSTS or STEPD_ACCESS_KEYS say otherwise.
ENV STEPD_ADDR=0.0.0.0:8083 STEPD_DATA=/data
VOLUME /data
EXPOSE 8083
# stepd health asks the server's /readyz (on 127.0.0.1:8083 here); the
# exec form needs no shell.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/stepd", "health"]
ENTRYPOINT ["/stepd"]
CMD ["serve"]
