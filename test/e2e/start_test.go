package e2e

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Limits on the work one of our packages may do when the binary starts:
// every command pays it, so tables, templates and regexps are built on
// first use instead. A parsed template or one compiled regexp is well past
// the allocations. The bytes allow for ~18 KiB the runtime charges to
// whichever init first makes a formatted error (fmt's and the runtime's
// first-use caches; in the lean recfs that is codec/kafka's ErrTooLarge,
// in recfs-full an AWS package); a table of ours built in one allocation
// passes below 32 KiB.
const (
	initAllocLimit = 24
	initByteLimit  = 32 << 10
)

// initCost is what GODEBUG=inittrace=1 reports for one package's init.
type initCost struct {
	pkg           string
	bytes, allocs int
}

// parseInittrace reads the "init PKG @T ms, C ms clock, B bytes, A allocs"
// lines of a Go binary's standard error.
func parseInittrace(t *testing.T, stderr []byte) []initCost {
	t.Helper()
	var costs []initCost
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, berr := strconv.Atoi(f[7])
		a, aerr := strconv.Atoi(f[9])
		if berr != nil || aerr != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		costs = append(costs, initCost{pkg: f[1], bytes: b, allocs: a})
	}
	return costs
}

// TestStartBuildsNothingOfOurs runs `recfs --help` with the runtime's init
// trace and checks that none of our packages allocates more than a few
// objects before main runs (third-party inits are not ours to change).
func TestStartBuildsNothingOfOurs(t *testing.T) {
	t.Parallel()
	needBinary(t)
	c := exec.Command(bin, "--help")
	c.Env = append(c.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("recfs --help: %v\n%s", err, stderr.Bytes())
	}
	ours := 0
	for _, c := range parseInittrace(t, stderr.Bytes()) {
		if c.pkg != "main" && !strings.HasPrefix(c.pkg, "github.com/recfs/recfs/") {
			continue
		}
		ours++
		if c.allocs > initAllocLimit || c.bytes > initByteLimit {
			t.Errorf("init of %s: %d allocations, %d bytes (limit %d, %d): build it on first use",
				c.pkg, c.allocs, c.bytes, initAllocLimit, initByteLimit)
		}
	}
	// Enough of ours to show the trace was read: main and the codecs.
	if ours < 8 {
		t.Fatalf("init trace names %d of our packages, want at least 8:\n%s", ours, stderr.Bytes())
	}
}

// notLean are package paths the lean recfs must not initialise: the AWS
// SDK (S3 sources), net/http and crypto/tls (http(s):// sources),
// protocompile/protodesc (--proto schemas), and the servers' libraries (mount's FUSE libraries; serve's WebDAV, NFS and
// HTML templates), which recfs-full has.
var notLean = []string{"github.com/aws/", "github.com/bufbuild/protocompile", "google.golang.org/protobuf/reflect/protodesc",
	"google.golang.org/protobuf/types/descriptorpb", "github.com/hanwen/go-fuse/", "bazil.org/fuse", "github.com/willscott/go-nfs",
	"golang.org/x/net/webdav", "encoding/xml", "html/template", "github.com/recfs/recfs/fs/serve", "github.com/recfs/recfs/fs/nfs",
	"net/http", "crypto/tls", "crypto/x509"}

// TestStartLeanInitsNoS3 runs both links' --help under the init trace:
// the lean recfs initialises nothing of notLean, recfs-full every one of
// them (so the trace shows what the split saves).
func TestStartLeanInitsNoS3(t *testing.T) {
	t.Parallel()
	needBinary(t)
	for _, b := range []struct {
		path string
		lean bool
	}{{bin, true}, {fullBin, false}} {
		c := exec.Command(b.path, "--help")
		c.Env = append(c.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%s --help: %v\n%s", b.path, err, stderr.Bytes())
		}
		costs := parseInittrace(t, stderr.Bytes())
		for _, p := range notLean {
			n := 0
			for _, c := range costs {
				if strings.HasPrefix(c.pkg, p) {
					n++
				}
			}
			switch {
			case b.lean && n > 0:
				t.Errorf("lean recfs initialises %d packages of %s", n, p)
			case !b.lean && n == 0:
				t.Errorf("recfs-full initialises nothing of %s: is the trace read?", p)
			}
		}
	}
}

// sampleLog writes recfs's sample (recfs sample) into a new directory and
// returns the directory and the sample's log.
func sampleLog(t *testing.T) (dir, log string) {
	t.Helper()
	needBinary(t)
	dir = t.TempDir()
	if r := runRecfs(t, "sample", dir); r.code != 0 {
		t.Fatalf("recfs sample: %d %s", r.code, r.stderr)
	}
	return dir, filepath.Join(dir, "events.log")
}

// TestStartLeanHandsOff: a command line needing S3, http(s):// or --proto
// runs in recfs-full, which the lean recfs finds beside itself; what
// recfs-full says of a bad S3 or HTTP flag shows it ran (the lean link has
// no such client to check it).
func TestStartLeanHandsOff(t *testing.T) {
	t.Parallel()
	dir, log := sampleLog(t)
	r := runRecfs(t, "info", "--s3-cache", "1", log)
	if r.code != 2 || !strings.Contains(r.stderr, "want a size of at least 1M") {
		t.Errorf("lean info --s3-cache 1: exit %d, stderr %q; want recfs-full's usage error", r.code, r.stderr)
	}
	// --proto: the schema loads in recfs-full (a missing file is its error).
	r = runRecfs(t, "cat", "--decode", "protobuf:M", "--proto", filepath.Join(dir, "none.proto"), log)
	if r.code == 0 || strings.Contains(r.stderr, "lean") || !strings.Contains(r.stderr, "none.proto") {
		t.Errorf("lean cat --proto: exit %d, stderr %q; want recfs-full's error about none.proto", r.code, r.stderr)
	}
	// A schema decode runs end to end through the hand-off.
	msgs := filepath.Join(dir, "m.log")
	c := exec.Command(bin, "append", "--create", "leveldb", "--lines", msgs)
	c.Stdin = strings.NewReader("\x10\x07\x1a\x05hello\n\x10\x08\x1a\x02hi\n") // M{n: 7, name: "hello"}, M{n: 8, name: "hi"}
	if r := runPrepared(t, c); r.code != 0 {
		t.Fatalf("recfs append: %d %s", r.code, r.stderr)
	}
	proto := filepath.Join(dir, "m.proto")
	if err := os.WriteFile(proto, []byte("syntax = \"proto3\";\nmessage M { int64 n = 2; string name = 3; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runRecfs(t, "cat", "--decode", "protobuf:M", "--proto", proto, msgs)
	if want := "{\"n\": \"7\", \"name\": \"hello\"}\n{\"n\": \"8\", \"name\": \"hi\"}\n"; r.code != 0 || r.stdout != want {
		t.Errorf("lean cat --decode protobuf:M --proto: exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, want)
	}
	// http(s):// sources and flags: recfs-full's usage error shows it ran.
	if r := runRecfs(t, "info", "--http-cache", "1", log); r.code != 2 || !strings.Contains(r.stderr, "want a size of at least 1M") {
		t.Errorf("lean info --http-cache 1: exit %d, stderr %q; want recfs-full's usage error", r.code, r.stderr)
	}
	// What needs neither stays in the lean process.
	if r := runRecfs(t, "info", log); r.code != 0 {
		t.Errorf("lean info: exit %d %s", r.code, r.stderr)
	}
}

// TestStartLeanWithoutFull: with no recfs-full beside it nor on PATH, the
// lean recfs refuses S3 and --proto command lines with a message saying
// what to install, does nothing else, and still runs the rest.
func TestStartLeanWithoutFull(t *testing.T) {
	t.Parallel()
	needBinary(t)
	alone := filepath.Join(t.TempDir(), "recfs")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeExec(t, alone, data)
	dir := t.TempDir()
	run := func(args ...string) result {
		c := exec.Command(alone, args...)
		c.Env = append(os.Environ(), "PATH="+dir) // no recfs-full on it
		return runPrepared(t, c)
	}
	if r := run("sample", dir); r.code != 0 {
		t.Fatalf("recfs sample: %d %s", r.code, r.stderr)
	}
	log := filepath.Join(dir, "events.log")
	mnt := filepath.Join(dir, "mnt")
	for _, args := range [][]string{
		{"cat", "s3://bucket/key"},
		{"mount", "--s3-endpoint", "http://127.0.0.1:1", log, mnt},
		{"cat", "--decode", "protobuf:M", "--proto", "m.proto", log},
		{"cat", "https://example.invalid/x.log"},
		{"info", "--http-cache", "8M", log},
		{"mount", log, mnt},
		{"mount", "--daemon", "--rw", log, mnt},
		{log, mnt, "-o", "ro"}, // the mount helper's argv form
		{"serve", "http", log},
		{"serve", "nfs", "--daemon", log},
	} {
		r := run(args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "recfs-full, which is not installed") {
			t.Errorf("%q without recfs-full: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(mnt); !os.IsNotExist(err) {
		t.Errorf("the refused mount touched its mount point: %v", err)
	}
	r := run("--json", "cat", "s3://bucket/key")
	var je struct {
		Error string
		Exit  int
	}
	if err := json.Unmarshal([]byte(r.stderr), &je); err != nil || je.Exit != 1 || !strings.Contains(je.Error, "recfs-full") {
		t.Errorf("--json without recfs-full: %q (%v)", r.stderr, err)
	}
	if r := run("info", log); r.code != 0 {
		t.Errorf("lean info without recfs-full: exit %d %s", r.code, r.stderr)
	}
	// The servers' help and usage errors are the lean link's own.
	if r := run("mount", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--rw") {
		t.Errorf("lean mount --help without recfs-full: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run("serve", "webdav"); r.code != 2 || strings.Contains(r.stderr, "recfs-full") {
		t.Errorf("lean serve webdav (no SRC) without recfs-full: exit %d, stderr %q; want its usage error", r.code, r.stderr)
	}
}

// TestStartLeanFullIsLean: a recfs-full that is a lean build too is
// refused (RECFS_HANDED_OFF), not run in a loop, for the servers as for S3.
func TestStartLeanFullIsLean(t *testing.T) {
	t.Parallel()
	needBinary(t)
	dir := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"recfs", "recfs-full"} {
		writeExec(t, filepath.Join(dir, name), data)
	}
	log, mnt := filepath.Join(dir, "ev.log"), filepath.Join(dir, "mnt")
	if r := runRecfs(t, "append", "--create", "leveldb", log); r.code != 0 {
		t.Fatalf("recfs append: %d %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"mount", log, mnt}, {"serve", "http", log}, {"cat", "s3://bucket/key"}} {
		r := runCmd(t, filepath.Join(dir, "recfs"), args...)
		if r.code != 1 || !strings.Contains(r.stderr, "is a lean build too") {
			t.Errorf("%q with a lean recfs-full: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestStartLeanOtherBuild: the lean recfs tells recfs-full its version
// and path, and a recfs-full of another build (a partial upgrade) refuses
// the command line, naming both, instead of running it.
func TestStartLeanOtherBuild(t *testing.T) {
	t.Parallel()
	dir, log := sampleLog(t)
	// What the lean recfs hands over: a recfs-full script beside a copy
	// of it prints the two variables.
	lean := filepath.Join(dir, "bin", "recfs")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(lean), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, lean, data)
	script := "#!/bin/sh\nprintf '%s|%s' \"$RECFS_HANDED_OFF\" \"$RECFS_HANDED_OFF_BY\"\n"
	writeExec(t, filepath.Join(dir, "bin", "recfs-full"), []byte(script))
	v := runRecfs(t, "--version")
	version := strings.TrimSpace(strings.TrimPrefix(v.stdout, "recfs version "))
	if v.code != 0 || version == "" {
		t.Fatalf("recfs --version: %+v", v)
	}
	if r := runCmd(t, lean, "cat", "s3://bucket/key"); r.code != 0 || r.stdout != version+"|"+lean {
		t.Errorf("the lean recfs handed over %q (exit %d, stderr %q), want %q", r.stdout, r.code, r.stderr, version+"|"+lean)
	}
	// recfs-full handed a line by another build refuses it.
	for _, args := range [][]string{{"info", log}, {"mount", log, filepath.Join(dir, "mnt")}} {
		c := exec.Command(fullBin, args...)
		c.Env = append(os.Environ(), "RECFS_HANDED_OFF=v0.0.1 go1.1", "RECFS_HANDED_OFF_BY=/opt/old/recfs")
		r := runPrepared(t, c)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "/opt/old/recfs (v0.0.1 go1.1)") ||
			!strings.Contains(r.stderr, fullBin+" ("+version+")") || !strings.Contains(r.stderr, "another build") {
			t.Errorf("recfs-full %q handed by another build: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mnt")); !os.IsNotExist(err) {
		t.Errorf("the refused mount touched its mount point: %v", err)
	}
	// The same build runs it.
	c := exec.Command(fullBin, "info", log)
	c.Env = append(os.Environ(), "RECFS_HANDED_OFF="+version, "RECFS_HANDED_OFF_BY="+bin)
	if r := runPrepared(t, c); r.code != 0 {
		t.Errorf("recfs-full handed by its own build: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStartLeanHelpMatchesFull: both links show the same help for every
// command, S3 flags and their defaults included (the lean link repeats
// source/s3's defaults; this catches a drift).
func TestStartLeanHelpMatchesFull(t *testing.T) {
	t.Parallel()
	needBinary(t)
	// Every command's help, and its subcommands' (serve webdav, index
	// many...), from the lists the helps show.
	seen := 0
	var walk func(path []string)
	walk = func(path []string) {
		args := append(append([]string{}, path...), "--help")
		lean, full := runRecfs(t, args...), runCmd(t, fullBin, args...)
		seen++
		if lean != full {
			t.Errorf("recfs %s differs between the links:\nlean: %+v\nfull: %+v", strings.Join(args, " "), lean, full)
		}
		inCmds := false
		for _, l := range strings.Split(lean.stdout, "\n") {
			switch {
			case strings.HasPrefix(l, "Available Commands:"):
				inCmds = true
			case inCmds && strings.HasPrefix(l, "  "):
				walk(append(append([]string{}, path...), strings.Fields(l)[0]))
			case inCmds:
				inCmds = false
			}
		}
	}
	walk(nil)
	if seen < 12 {
		t.Fatalf("compared the help of %d commands, want the root, every command and serve's protocols", seen)
	}
}

// leanInitLimit is how many packages the lean recfs may initialise before
// main runs: every command, a one-record append included, pays for each
// (page faults into its code and data, whatever its init does). A new
// dependency that raises the count raises it here too, on purpose.
const leanInitLimit = 79

// TestStartLeanStatic checks what the lean recfs costs before main runs,
// by counting, not timing: it is a static executable (no PT_INTERP
// program header: no dynamic loader, libc or cgo thread start-up run with
// every command; the Makefile and buildBoth link it with CGO_ENABLED=0),
// and it initialises at most leanInitLimit packages.
func TestStartLeanStatic(t *testing.T) {
	t.Parallel()
	needBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("lean recfs has a PT_INTERP program header (dynamically linked): link it with CGO_ENABLED=0")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) != 0 {
		t.Errorf("lean recfs imports shared libraries %q (%v), want none", libs, err)
	}
	c := exec.Command(bin, "--version")
	c.Env = append(c.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("recfs --version: %v\n%s", err, stderr.Bytes())
	}
	n := len(parseInittrace(t, stderr.Bytes()))
	if n == 0 {
		t.Fatalf("no init trace read:\n%s", stderr.Bytes())
	}
	if n > leanInitLimit {
		t.Errorf("lean recfs initialises %d packages, limit %d: keep what only some commands need out of the lean link, or raise the limit knowingly", n, leanInitLimit)
	}
}
