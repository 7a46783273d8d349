package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/recfs/recfs/fs/open"
)

// The recfs command is built in two links. recfs-full, the default build
// (go build, go install ./cmd/recfs), has every feature. The Makefile's
// recfs is built with the tag recfs_lean: it leaves out what costs every
// process start most — the S3 source (the AWS SDK's credential chain and
// endpoint tables), the http(s):// source (net/http, crypto/tls), .proto
// schemas (protocompile, protodesc), and the long-lived servers (mount's
// FUSE libraries; serve's HTTP server, WebDAV and NFS) — and hands a
// command line that needs them to recfs-full: it replaces itself with it
// (same pid, arguments and environment). S3, http(s):// and .proto
// command lines go before anything else happens; mount and serve (the
// mount helper's argv form too) once cobra has parsed them, so that their
// help, completion and usage errors are the lean link's own, the same as
// recfs-full's.

// fullName is the full link's file name, looked for beside the running
// executable, then on PATH.
const fullName = "recfs-full"

// envHandedOff marks a process a lean recfs started in its place; its
// value is the lean build's version. A lean binary that finds it set was
// handed the command line back (recfs-full is a lean build too) and fails
// instead of looping; recfs-full refuses a command line handed by another
// build than its own (see checkHandedOff).
const envHandedOff = "RECFS_HANDED_OFF"

// envHandedOffBy holds the path of the lean recfs that handed the command
// line over, for recfs-full's messages.
const envHandedOffBy = "RECFS_HANDED_OFF_BY"

// needsFull tells what in command line args needs the full link ("" for
// nothing): an s3:// or http(s):// operand, an S3 or HTTP flag, --proto
// or --proto-path. After "--" only operands are looked at: a word there
// that looks like a flag is a file name. A mount helper's -o options
// (s3_*, proto) are not looked at: only the helper's argv form has -o, and
// that form is a mount, which goes to recfs-full once parsed.
func needsFull(args []string) string {
	operands := false
	for _, a := range args {
		switch kind := open.KindOf(a); {
		case kind == open.S3Object || kind == open.S3Prefix:
			return "s3:// sources"
		case kind == open.HTTP:
			return "http(s):// sources"
		case operands:
		case a == "--":
			operands = true
		case strings.HasPrefix(a, "--s3-"):
			return "S3 flags (" + a + ")"
		case strings.HasPrefix(a, "--http-"):
			return "HTTP flags (" + a + ")"
		case a == "--proto" || strings.HasPrefix(a, "--proto=") || strings.HasPrefix(a, "--proto-path"):
			return "--proto schemas"
		}
	}
	return ""
}

// findFull returns the path of recfs-full: beside the running executable
// (symbolic links resolved), else on PATH.
func findFull() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), fullName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(fullName)
}

// handOff replaces the process with recfs-full running argv, because of
// why; it returns only when it cannot (the exit status, the reason told
// on stderr).
func handOff(why string, argv []string, stderr io.Writer) int {
	fail := func(err error) int { return printError(argv[1:], stderr, err, exitFailure) }
	if os.Getenv(envHandedOff) != "" {
		return fail(fmt.Errorf("%s need %s, but the %s found is a lean build too: install the full build (go install ./cmd/recfs, or make install) as %s", why, fullName, fullName, fullName))
	}
	path, err := findFull()
	if err != nil {
		self, _ := os.Executable()
		return fail(fmt.Errorf("%s need %s, which is not installed: this recfs (%s) is the lean build, without S3, http(s):// sources, .proto schemas, mount and serve; install %s beside it or on PATH (make install installs both), or use a full build (go install ./cmd/recfs)", why, fullName, self, fullName))
	}
	self, _ := os.Executable()
	err = syscall.Exec(path, argv, append(os.Environ(), envHandedOff+"="+version(), envHandedOffBy+"="+self))
	return fail(fmt.Errorf("%s need %s: %w", why, path, err))
}

// checkHandedOff runs first in recfs-full: when a lean recfs handed it
// the command line (envHandedOff set), it removes the hand-off variables,
// so that they reach no child, and returns an error when the lean recfs
// is another build (version) than this one — a partial upgrade, whose
// flags recfs-full may read otherwise — and nil when it is the same
// build or nothing was handed over.
func checkHandedOff() error {
	lean, ok := os.LookupEnv(envHandedOff)
	if !ok {
		return nil
	}
	by := os.Getenv(envHandedOffBy)
	_ = os.Unsetenv(envHandedOff)
	_ = os.Unsetenv(envHandedOffBy)
	self, _ := os.Executable()
	return sameBuild(by, lean, self, version())
}

// sameBuild returns nil when the lean recfs at leanPath, of version
// leanVersion, and recfs-full at fullPath, of fullVersion, are one build,
// and else an error naming both, and what to do.
func sameBuild(leanPath, leanVersion, fullPath, fullVersion string) error {
	if leanVersion == fullVersion {
		return nil
	}
	if leanPath == "" {
		leanPath = "recfs"
	}
	return fmt.Errorf("%s (%s) handed this command line to %s (%s), another build: install both from one build (make install installs both)", leanPath, leanVersion, fullPath, fullVersion)
}
