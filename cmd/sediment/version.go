package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit override what the binary reports about its build:
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=0123abcd" ./cmd/sediment
//
// Left empty, they come from the build information the Go toolchain
// stamps into every binary (see buildInfo).
var (
	version string
	commit  string
)

func init() {
	commands["version"] = command{summary: "print the version and commit this binary was built from", run: runVersion}
}

// build is what a binary knows of its own build.
type build struct {
	// Version is the module version: a release tag for `go install
	// ...@v1.2.0`, "(devel)" for a build from a working tree, or the
	// -X main.version override.
	Version string
	// Commit is the VCS revision `go build` stamps (with "-dirty" when the
	// working tree had changes), or the -X main.commit override; "unknown"
	// when neither is there (a build outside a repository, a test binary).
	Commit string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// buildInfo reads the binary's build information, the link-time overrides
// winning.
func buildInfo() build {
	b := build{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			b.Version = v
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			b.Commit = rev
		}
	}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		b.Commit = commit
	}
	return b
}

// runVersion is `sediment version`.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: sediment version")
		if args[0] == "-h" || args[0] == "--help" {
			return 0
		}
		return 2
	}
	b := buildInfo()
	fmt.Fprintf(stdout, "sediment %s (commit %s, %s, %s/%s)\n", b.Version, b.Commit, b.GoVersion, runtime.GOOS, runtime.GOARCH)
	return 0
}
