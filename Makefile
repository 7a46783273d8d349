# recfs — see README.md. Every target works on a fresh machine of the project's kind.
GO        ?= go
BIN       ?= bin/recfs
FULLBIN   ?= $(dir $(BIN))recfs-full
FUZZTIME  ?= 30s
PREFIX    ?= /usr/local
PKGS      := ./...
LEANPKGS  := ./cmd/recfs ./fs/open ./codec/decoders ./codec/pbdecode

.PHONY: all build test unit nested beam race e2e soak fuzz bench microbench demo lint tools man install clean

all: build

## build: the two links of the one command (README "Two binaries"): recfs, lean (tag recfs_lean:
## no S3 or http(s) sources, no .proto schemas, no servers — mount, serve and the mount helper run
## in recfs-full, which it execs beside it for those, same pid; static, without cgo, so no dynamic
## loader or libc starts with it; its mount helper finds an NSS-only user's home through getent),
## and recfs-full, everything (with cgo where a C compiler is present).
build:
	CGO_ENABLED=0 $(GO) build -tags recfs_lean -o $(BIN) ./cmd/recfs
	$(GO) build -o $(FULLBIN) ./cmd/recfs

## test: what CI runs — lint, unit tests (under the race detector), then the nested module
## (interop + end-to-end mounts) and the Beam module. `make unit` runs the unit tests without it, faster.
test: lint race nested beam

unit:
	$(GO) test -count=1 $(PKGS)

nested: build
	cd test && $(GO) test -count=1 -p 1 -timeout 25m ./...

## beam: the Beam source's module (recfsio, recfs-beam) on the in-process prism runner. Its
## first build compiles the Beam Go SDK (about 4.5 minutes of 2 cores); later ones are cached.
beam:
	cd beam && $(GO) test -count=1 -timeout 10m ./...

race:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

e2e: build
	cd test && RECFS_TEST_FUSE=1 $(GO) test -count=1 -p 1 -timeout 15m ./e2e/...

## lint: gofmt, go vet, staticcheck and go mod tidy -diff over the three modules (and the files
## of the lean link, tag recfs_lean).
lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags recfs_lean $(LEANPKGS)
	cd test && $(GO) vet ./...
	cd beam && $(GO) vet ./...
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags recfs_lean $(LEANPKGS)
	cd test && $(STATICCHECK) ./...
	cd beam && $(STATICCHECK) ./...
	$(GO) mod tidy -diff
	cd test && $(GO) mod tidy -diff
	cd beam && $(GO) mod tidy -diff

## tools: the pinned linters, built once into TOOLS (a cache folder that outlives clones);
## STATICCHECK=path uses another build instead.
TOOLS               ?= $(HOME)/.cache/recfs-tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK_PINNED  := $(abspath $(TOOLS))/staticcheck-$(STATICCHECK_VERSION)/staticcheck
STATICCHECK         ?= $(STATICCHECK_PINNED)
tools: $(if $(filter $(STATICCHECK_PINNED),$(STATICCHECK)),$(STATICCHECK_PINNED))
$(STATICCHECK_PINNED):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## soak: the long versions of the attack tests (concurrent appends, kill loops, change under a
## mount, memory watches): the tests that read RECFS_SOAK=1 run for minutes instead of seconds.
soak: build
	RECFS_SOAK=1 $(GO) test -count=1 -timeout 60m $(PKGS)
	cd test && RECFS_SOAK=1 RECFS_TEST_FUSE=1 $(GO) test -count=1 -p 1 -timeout 90m ./...

## fuzz: every Fuzz target of both modules for FUZZTIME each (make fuzz FUZZTIME=5m).
fuzz:
	@set -e; for mod in . test; do \
	  for pkg in $$(cd $$mod && $(GO) list ./...); do \
	    for t in $$(cd $$mod && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	      echo "== $$pkg $$t ($(FUZZTIME))"; \
	      (cd $$mod && $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg); \
	    done; \
	  done; \
	done

## bench: recfs against its peers and the machine's limits, in one run; writes docs/BENCHMARKS.md
## Mount rows at 100k records; BENCHFLAGS='-records 2000000 -only mount -no-squashfuse' for the millions,
## BENCHFLAGS=-quick for a small run; see `cd test && go run ./cmd/recfs-bench -h`.
bench: build
	cd test && $(GO) run ./cmd/recfs-bench -bin ../$(BIN) -out ../docs $(BENCHFLAGS)

## microbench: every Go benchmark of the product and of the interop module (RECFS_BENCH_BYTES sets log sizes).
microbench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
	cd test && $(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...

demo: build
	bash docs/demo.sh $(BIN)

## man: man pages of every command (from the --help text) into bin/man/man1 (man -M bin/man recfs-mount).
man: build
	$(BIN) man bin/man/man1

## install: recfs and recfs-full into $(PREFIX)/bin (default /usr/local/bin, where mount(8) looks for
## the helper) and the man pages into $(PREFIX)/share/man/man1 (man recfs-mount).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/recfs
	install -m 755 $(FULLBIN) $(DESTDIR)$(PREFIX)/bin/recfs-full
	$(BIN) man $(DESTDIR)$(PREFIX)/share/man/man1 >/dev/null

clean:
	rm -rf bin
