# stepd serve in a container: a static binary (CGO_ENABLED=0; the SQLite
# driver is pure Go) on a distroless base, run as a non-root user, with
# its durable store in the /data volume and the API on port 8083.
#
#   docker build -t stepd --build-arg VERSION=v1.2.3 .
#   docker run -p 8083:8083 -v stepd-data:/data stepd
FROM golang:1.26 AS build
ARG VERSION=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/stepd ./cmd/stepd \
	&& mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
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
ENTRYPOINT ["/stepd"]
CMD ["serve"]
