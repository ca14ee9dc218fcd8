# Sluice build and test entry points. `make test` is the one command CI runs.
GO ?= go
BIN ?= bin/sluice
PREFIX ?= /usr/local

.PHONY: build test install links clean bench
build:
	$(GO) build -o $(BIN) ./cmd/sluice

test:
	./scripts/test.sh

install: build
	install -D -m 0755 $(BIN) $(PREFIX)/bin/sluice
	$(PREFIX)/bin/sluice install-links $(PREFIX)/bin

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

clean:
	rm -rf bin
