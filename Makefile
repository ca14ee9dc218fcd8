# Sluice build and test entry points. `make test` is the one command CI runs.
GO ?= go
BIN ?= bin/sluice
PREFIX ?= /usr/local

.PHONY: build test install links clean bench chaos oracle-record oracle-diff oracle-check oracle-schema oracle-exporter
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

# The chaos test (internal/ctld TestChaos): under load for DURATION, rounds
# of SIGKILL of the controller or an agent, SIGSTOP of either for longer
# than SlurmdTimeout, and a full disk under the state directory (root),
# invariants checked after each round. make test runs it for 40 s (every
# kind once, about 90 s in all).
DURATION ?= 5m
chaos:
	SLUICE_CHAOS_DURATION=$(DURATION) $(GO) test -count=1 -run '^TestChaos$$' -timeout 0 -v ./internal/ctld

# The differential suite (test/oracle): ONLY=a,b limits it to some scenarios.
# oracle-record plays the scenarios on real Slurm (../shared/oracle) and
# rewrites the golden files; oracle-diff plays them on real Slurm and on
# Sluice at once; oracle-check compares Sluice with the golden files (what
# make test does). All three need root. ORACLES=a.sh,b.sh plays on several
# oracles at once (wrappers of oracle.sh with their own ORACLE_ROOT,
# ORACLE_STATE and ports), one scenario each.
ORACLE_SH ?= ../shared/oracle/oracle.sh
ORACLES ?= $(ORACLE_SH)
ORACLE_ONLY = $(if $(ONLY),-only $(ONLY))

oracle-record: build
	$(GO) build -o bin/oracle-diff ./test/oracle/cmd/oracle-diff
	ORACLE_SH=$(ORACLE_SH) scripts/oracle-prepare.sh
	ORACLE_SH=$(ORACLES) bin/oracle-diff record $(ORACLE_ONLY); rc=$$?; $(ORACLE_SH) down >/dev/null; exit $$rc

oracle-diff: build
	$(GO) build -o bin/oracle-diff ./test/oracle/cmd/oracle-diff
	ORACLE_SH=$(ORACLE_SH) scripts/oracle-prepare.sh
	ORACLE_SH=$(ORACLES) bin/oracle-diff live $(ORACLE_ONLY); rc=$$?; $(ORACLE_SH) down >/dev/null; exit $$rc

oracle-check: build
	$(GO) build -o bin/oracle-diff ./test/oracle/cmd/oracle-diff
	bin/oracle-diff check $(ORACLE_ONLY)

# The schema check (test/oracle schema_test.go): Sluice's --json replies
# and the golden files' against slurmrestd 24.11's OpenAPI description,
# generated inside the oracle at test time (never committed). Needs root.
oracle-schema:
	ORACLE_SH=$(ORACLE_SH) scripts/oracle-prepare.sh
	ORACLE_SH=$(abspath $(ORACLE_SH)) $(GO) test -count=1 -run 'Schemas$$' -v ./test/oracle

# rivosinc/prometheus-slurm-exporter (JSON mode) against the oracle and
# Sluice: the same metric families. EXPORTER=PATH of its binary.
oracle-exporter:
	ORACLE_SH=$(ORACLE_SH) scripts/oracle-prepare.sh
	SLUICE_EXPORTER=$(abspath $(EXPORTER)) ORACLE_SH=$(abspath $(ORACLE_SH)) $(GO) test -count=1 -run '^TestExporterFamilies$$' -v ./test/oracle
