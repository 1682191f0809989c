# The two commands README.md names: `make run` and `make test`.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)

PREFIX ?= /usr/local
DESTDIR ?=
# `make install CONFIG=debug` installs the debug build (the tests do, to reuse theirs).
CONFIG ?= release
# Where `make run` serves the page and /metrics (its embedded default; `make run LISTEN=…`).
LISTEN ?= 127.0.0.1:10951
# Release builds carry the Swift runtime inside the binaries: nothing under the toolchain's
# directory is needed at run time, and the daemon's peak RSS is 3.5 MB lower (docs/BENCHMARKS.md).
# With that flag the client is one static executable (IFMETER_STATIC_CLIENT, Package.swift);
# scripts/release-build.sh builds the same way.
BUILDFLAGS = -c $(CONFIG) $(if $(filter release,$(CONFIG)),--static-swift-stdlib)
BUILD = $(if $(filter release,$(CONFIG)),IFMETER_STATIC_CLIENT=1) $(SWIFT) build $(BUILDFLAGS)
BINDIR = $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DOCDIR = $(PREFIX)/share/doc/ifmeter
MANDIR = $(PREFIX)/share/man
COMPLETIONDIR = $(PREFIX)/share/bash-completion/completions

.PHONY: run test build deb bench fuzz install install-files uninstall clean

## Install dependencies, build, and run the daemon in the foreground on its embedded default
## (as root: /var/lib/ifmeter, /run/ifmeter/ifmeterd.sock, /var/log/ifmeter; otherwise the
## XDG state and runtime directories), with the page and /metrics on http://$(LISTEN)/. Ctrl-C
## stops it cleanly.
run:
	scripts/install-deps
	$(BUILD) --product ifmeterd
	$(BUILD) --product ifmeter
	"$$($(BUILD) --show-bin-path)/ifmeterd" --metrics-listen $(LISTEN)

## Install dependencies, build, and run every test (kernel tests need root; they skip otherwise),
## failing if the tests left a process, namespace, container, VM or X lock file behind
## (scripts/test-hygiene); then the plain `swift build -c release` a Swift developer types first
## must build and link.
test:
	scripts/install-deps --test
	$(SWIFT) build --build-tests
	scripts/test-hygiene $(SWIFT) test
	$(SWIFT) build -c release

build:
	scripts/install-deps
	$(SWIFT) build

## A Debian package of the release build: ifmeter_<version>-1_amd64.deb (scripts/make-deb).
deb:
	scripts/make-deb

## Sample cost at 100, 1000 and 4000 interfaces against a raw C dump, then the daemon beside
## vnstatd, then /metrics beside node_exporter, then the client's views beside vnStat's
## (root; docs/BENCHMARKS.md), then root's status latency under a hostile neighbour, then the
## HTTP listener under attack (root latency, scrapes, watchdog gaps, RSS, SIGTERM).
bench:
	scripts/install-deps --bench
	scripts/bench
	scripts/bench-metrics
	scripts/bench-views
	scripts/bench-memory
	scripts/bench-hostile
	scripts/bench-listener
	scripts/bench-tenant-flood
	scripts/bench-scopes
	scripts/bench-page
	scripts/bench-writes
	scripts/bench-dbsize

## Every fuzz target under libFuzzer and ASan for FUZZ_SECONDS each (default 60); see docs/FUZZING.md.
fuzz:
	scripts/install-deps --test
	scripts/fuzz

## Build, then install the daemon, the client, the systemd units (paths filled in), man pages,
## bash completion (written by the client from its own commands) and the documentation.
install:
	scripts/install-deps
	$(BUILD) --product ifmeterd
	$(BUILD) --product ifmeter
	$(MAKE) install-files BUILT="$$($(BUILD) --show-bin-path)"
	# The service's system user (systemd/ifmeter.sysusers), on this machine only.
	if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then systemd-sysusers "$(SYSUSERSDIR)/ifmeter.conf"; fi

## Install what is already built in BUILT (no SwiftPM involved: the tests call this while
## their own build holds SwiftPM's lock).
install-files:
	test -x "$(BUILT)/ifmeterd" && test -x "$(BUILT)/ifmeter"
	install -D -m 0755 "$(BUILT)/ifmeterd" "$(DESTDIR)$(BINDIR)/ifmeterd"
	install -D -m 0755 "$(BUILT)/ifmeter" "$(DESTDIR)$(BINDIR)/ifmeter"
	install -D -m 0644 man/ifmeter.1 "$(DESTDIR)$(MANDIR)/man1/ifmeter.1"
	install -D -m 0644 man/ifmeterd.conf.5 "$(DESTDIR)$(MANDIR)/man5/ifmeterd.conf.5"
	install -D -m 0644 man/ifmeterd.8 "$(DESTDIR)$(MANDIR)/man8/ifmeterd.8"
	install -d "$(DESTDIR)$(COMPLETIONDIR)"
	"$(BUILT)/ifmeter" completion bash > "$(DESTDIR)$(COMPLETIONDIR)/ifmeter"
	chmod 0644 "$(DESTDIR)$(COMPLETIONDIR)/ifmeter"
	install -d "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(DOCDIR)/examples"
	for unit in ifmeterd.service ifmeterd.socket ifmeterd-events.socket ifmeterd-metrics.socket ifmeterd-attach.socket ifmeterd-attach@.service; do \
	  sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' "systemd/$$unit" > "$(DESTDIR)$(UNITDIR)/$$unit"; \
	  chmod 0644 "$(DESTDIR)$(UNITDIR)/$$unit"; \
	done
	install -D -m 0644 systemd/ifmeter.sysusers "$(DESTDIR)$(SYSUSERSDIR)/ifmeter.conf"
	install -m 0644 README.md docs/*.md "$(DESTDIR)$(DOCDIR)/"
	install -d "$(DESTDIR)$(DOCDIR)/decisions"
	install -m 0644 docs/decisions/*.md "$(DESTDIR)$(DOCDIR)/decisions/"
	install -d "$(DESTDIR)$(DOCDIR)/images"
	install -m 0644 docs/images/*.png "$(DESTDIR)$(DOCDIR)/images/"
	install -m 0644 docs/examples/ifmeterd.conf docs/examples/metrics-listen.conf docs/examples/metrics-socket.conf docs/examples/ifmeter-textfile.service \
	  docs/examples/ifmeter-textfile.timer docs/examples/grafana-dashboard.json docs/examples/ifmeter-plans.rules.yml \
	  docs/examples/ifmeter-notify.service docs/examples/ifmeter-notify-desktop.service docs/examples/no-container-names.conf docs/examples/meter-inside.conf \
	  docs/examples/rootless-container-names.conf \
	  docs/examples/prometheus-agent.yml "$(DESTDIR)$(DOCDIR)/examples/"

uninstall:
	rm -f "$(DESTDIR)$(SYSUSERSDIR)/ifmeter.conf"
	rm -f "$(DESTDIR)$(BINDIR)/ifmeterd" "$(DESTDIR)$(BINDIR)/ifmeter" "$(DESTDIR)$(UNITDIR)/ifmeterd.service" "$(DESTDIR)$(UNITDIR)/ifmeterd.socket" "$(DESTDIR)$(UNITDIR)/ifmeterd-events.socket" "$(DESTDIR)$(UNITDIR)/ifmeterd-metrics.socket"
	rm -f "$(DESTDIR)$(UNITDIR)/ifmeterd-attach.socket" "$(DESTDIR)$(UNITDIR)/ifmeterd-attach@.service"
	rm -f "$(DESTDIR)$(MANDIR)/man1/ifmeter.1" "$(DESTDIR)$(MANDIR)/man5/ifmeterd.conf.5" "$(DESTDIR)$(MANDIR)/man8/ifmeterd.8"
	rm -f "$(DESTDIR)$(COMPLETIONDIR)/ifmeter"
	rm -rf "$(DESTDIR)$(DOCDIR)"

clean:
	rm -rf .build
