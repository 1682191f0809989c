# Sourced by the scripts that build what `make install` builds, with the Makefile's release
# flags: the Swift runtime inside the binaries, and the client one static executable
# (IFMETER_STATIC_CLIENT, see Package.swift). Set the same way every time, so that switching
# between these scripts and `make` rebuilds nothing.
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
export IFMETER_STATIC_CLIENT=1
# release_build PRODUCT...: builds each product; release_bin: where they are.
release_build() { local product; for product; do "$SWIFT" build -c release --static-swift-stdlib --product "$product" >&2; done; }
release_bin() { "$SWIFT" build -c release --static-swift-stdlib --show-bin-path; }
