# The two commands README.md names: `make run` and `make test`.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)

.PHONY: run test build bench clean

## Install dependencies, build, and run the daemon in the foreground on its embedded default
## (as root: /var/lib/ifmeter, /run/ifmeter/ifmeterd.sock, /var/log/ifmeter; otherwise the
## XDG state and runtime directories). Ctrl-C stops it cleanly.
run:
	scripts/install-deps
	$(SWIFT) build -c release --product ifmeterd
	"$$($(SWIFT) build -c release --show-bin-path)/ifmeterd"

## Install dependencies, build, and run every test (kernel tests need root; they skip otherwise).
test:
	scripts/install-deps --test
	$(SWIFT) build --build-tests
	$(SWIFT) test

build:
	scripts/install-deps
	$(SWIFT) build

## Sample cost at 100, 1000 and 4000 interfaces against a raw C dump (root).
bench:
	scripts/install-deps
	scripts/bench

clean:
	rm -rf .build
