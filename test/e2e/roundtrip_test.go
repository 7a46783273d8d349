package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// opCountsEnv is measure.OpCountsEnv of fs/gofuse/internal/measure (an
// internal package, and the test module does not build the FUSE
// libraries).
const opCountsEnv = "RECFS_FUSE_OPCOUNTS"

// Round trips of a warm pass. The gofuse server counts the requests it
// answers by opcode when measure.OpCountsEnv names a file, and writes the
// counts there on SIGUSR1. These tests read through a real mount twice and
// count what the second (warm) pass cost: the kernel has every name,
// attribute and page by then, so whatever is still sent per file is a
// mode that got lost (no-open, no-flush, keep-cache), not noise.

// opCounts are FUSE requests by opcode name.
type opCounts map[string]int64

// countingMount mounts src at a new directory with the request counter on.
func countingMount(t *testing.T, src string, args ...string) (*mount, func() opCounts) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "opcounts")
	t.Setenv(opCountsEnv, file)
	m := startMount(t, src, newMountDir(t), append([]string{"--backend", "gofuse"}, args...)...)
	snap := func() opCounts {
		t.Helper()
		os.Remove(file)
		if err := m.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		var b []byte
		waitFor(t, 5*time.Second, 10*time.Millisecond, func() (bool, string) {
			var err error
			b, err = os.ReadFile(file)
			return err == nil, fmt.Sprintf("no op counts in %s after SIGUSR1: %v\nstderr:\n%s", file, err, m.stderr)
		})
		return parseOpCounts(t, b)
	}
	return m, snap
}

func parseOpCounts(t *testing.T, b []byte) opCounts {
	t.Helper()
	c := opCounts{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("bad op count line %q", sc.Text())
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		c[f[0]] = n
	}
	if len(c) == 0 {
		t.Fatalf("no op counts in %q", b)
	}
	return c
}

// sub returns c - prev, opcode by opcode.
func (c opCounts) sub(prev opCounts) opCounts {
	d := opCounts{}
	for k, v := range c {
		d[k] = v - prev[k]
	}
	return d
}

func (c opCounts) String() string {
	var parts []string
	for k, v := range c {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// grepFiles runs grep -rl word dir and returns the matching names below
// dir, sorted.
func grepFiles(t *testing.T, word, dir string) []string {
	t.Helper()
	r := runCmd(t, "grep", "-rl", word, dir)
	if r.code != 0 {
		t.Fatalf("grep -rl %s %s: exit %d: %s", word, dir, r.code, r.stderr)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		names = append(names, strings.TrimPrefix(l, dir+"/"))
	}
	sort.Strings(names)
	return names
}

// countingLog writes recs as a leveldb log named name in a new directory
// and mounts it with the request counter (countingMount and args); it
// returns the mount, its counts snapshot and the log's path.
func countingLog(t *testing.T, name string, recs [][]byte, args ...string) (*mount, func() opCounts, string) {
	t.Helper()
	src := tempLog(t, name, recs)
	m, snap := countingMount(t, src, args...)
	return m, snap, src
}

// grepFinds fails the test unless grep -rl needle over dir finds just the
// names in want (sorted); pass names the grep ("cold", "warm").
func grepFinds(t *testing.T, pass, dir string, want []string) {
	t.Helper()
	if got := grepFiles(t, "needle", dir); !equalStrings(got, want) {
		t.Fatalf("%s grep -rl found %d names, want %d", pass, len(got), len(want))
	}
}

// warmRecords makes n records of about 1 KiB; every 10th holds "needle".
// It returns them and the names grep -rl needle must find.
func warmRecords(n int) ([][]byte, []string) {
	recs := genRecords(11, n, 1024)
	var want []string
	for i := range recs {
		if i%10 == 3 {
			copy(recs[i], "needle")
			want = append(want, fmt.Sprintf("%06d", i))
		}
	}
	return recs, want
}

// TestWarmGrepNoOpen: on a read-only mount, the first grep -r after the
// mount looks no record up by name (its listing brought the entries), and
// a warm grep -r over a few thousand records sends no OPEN, FLUSH or
// RELEASE (the kernel's no-open and no-flush modes); both find what they
// must.
func TestWarmGrepNoOpen(t *testing.T) {
	needFUSE(t)
	const n = 3000
	recs, want := warmRecords(n)
	m, snap, _ := countingLog(t, "warm.log", recs, "--no-cache")
	mounted := snap()
	grepFinds(t, "cold", m.dir, want)
	before := snap()
	// The first pass reads records (which shows the counter counts; some
	// may have been pushed into the page cache ahead of grep, see
	// TestFirstGrepPushesAhead) and lists the directory with its entries
	// (READDIRPLUS), so it looks no record up by name.
	if d := before.sub(mounted); d["READ"] == 0 || d["LOOKUP"] > n/10 || d["READDIRPLUS"] == 0 {
		t.Errorf("first grep -r after mount over %d records: %v: want READDIRPLUS and no LOOKUP per record", n, d)
	}
	grepFinds(t, "warm", m.dir, want)
	d := snap().sub(before)
	t.Logf("warm grep -r over %d records: %v", n, d)
	for _, op := range []string{"OPEN", "FLUSH", "RELEASE"} {
		if d[op] != 0 {
			t.Errorf("warm grep -r sent %d %s requests for %d records (%v): want none", d[op], op, n, d)
		}
	}
	// Names, attributes and pages stay cached: a few may be reclaimed
	// under memory pressure, not a per-file share.
	for _, op := range []string{"LOOKUP", "GETATTR", "READ"} {
		if d[op] > n/10 {
			t.Errorf("warm grep -r sent %d %s requests for %d records (%v)", d[op], op, n, d)
		}
	}
	// cat reads every record once more, without a round trip either.
	r := runCmd(t, "sh", "-c", "cat "+m.dir+"/0* | wc -c")
	var total int
	for _, rec := range recs {
		total += len(rec)
	}
	if strings.TrimSpace(r.stdout) != strconv.Itoa(total) {
		t.Fatalf("cat of every record: %q bytes, want %d (%s)", r.stdout, total, r.stderr)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPlainFileRewrittenShows: a passed-through file of a directory mount
// rewritten in place (same size, same inode) shows its new bytes within a
// couple of seconds, on both backends: the kernel's no-open mode keeps
// cached pages across opens, so the mount must let the kernel notice the
// new mtime instead of trusting its cached attributes for an hour.
func TestPlainFileRewrittenShows(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		srcDir := t.TempDir()
		recfile.WriteLog(t, filepath.Join(srcDir, "a.log"), genRecords(2, 5, 100))
		plain := filepath.Join(srcDir, "notes.txt")
		if err := os.WriteFile(plain, []byte("version one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mnt := newMountDir(t)
		startMount(t, srcDir, mnt, "--no-cache", "--backend", backend)
		if b, err := os.ReadFile(filepath.Join(mnt, "notes.txt")); err != nil || string(b) != "version one\n" {
			t.Fatalf("first read: %q %v", b, err)
		}
		// Rewrite in place, and make sure the mtime moves.
		f, err := os.OpenFile(plain, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("version two\n"), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		later := time.Now().Add(time.Second)
		if err := os.Chtimes(plain, later, later); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, 100*time.Millisecond, func() (bool, string) {
			b, err := os.ReadFile(filepath.Join(mnt, "notes.txt"))
			return err == nil && string(b) == "version two\n", fmt.Sprintf("notes.txt still reads %q (%v) after it was rewritten", b, err)
		})
	})
}

// TestRWWarmRoundTrips: a --rw mount keeps OPEN (created files need their
// handles, and FLUSH appends them when close(2) returns), but an existing
// record costs at most one synchronous round trip on a warm pass: OPEN,
// with FOPEN_NOFLUSH|FOPEN_KEEP_CACHE, and no FLUSH, LOOKUP, GETATTR or
// READ per record (RELEASE is asynchronous: close(2) does not wait for it).
// A file created after reading records is in the source when close
// returns.
func TestRWWarmRoundTrips(t *testing.T) {
	needFUSE(t)
	const n = 2000
	recs, want := warmRecords(n)
	m, snap, src := countingLog(t, "rw.log", recs, "--no-cache", "--rw")
	grepFinds(t, "cold", m.dir, want)
	before := snap()
	grepFinds(t, "warm", m.dir, want)
	d := snap().sub(before)
	t.Logf("warm grep -r over %d records of a --rw mount: %v", n, d)
	sync := d["OPEN"] + d["FLUSH"] + d["LOOKUP"] + d["GETATTR"] + d["READ"]
	if sync > n+n/20 {
		t.Errorf("warm grep -r of a --rw mount: %d synchronous requests for %d records (%v): want at most one per record", sync, n, d)
	}
	if d["FLUSH"] > 0 {
		t.Errorf("warm grep -r of a --rw mount sent %d FLUSH (%v): records are opened with FOPEN_NOFLUSH", d["FLUSH"], d)
	}
	// cat of every record, once more: the pages survive the opens
	// (FOPEN_KEEP_CACHE), so the OPEN is the only synchronous request.
	before = snap()
	if r := runCmd(t, "sh", "-c", "cat "+m.dir+"/0* | wc -c"); r.code != 0 || strings.TrimSpace(r.stdout) == "0" {
		t.Fatalf("cat of every record: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	d = snap().sub(before)
	t.Logf("warm cat of %d records of a --rw mount: %v", n, d)
	if sync := d["OPEN"] + d["FLUSH"] + d["LOOKUP"] + d["GETATTR"] + d["READ"]; sync > n+n/20 || d["READ"] > n/20 {
		t.Errorf("warm cat of a --rw mount: %d synchronous requests, %d READ for %d records (%v): want one OPEN per record and the pages kept", sync, d["READ"], n, d)
	}
	// Appends still land when close(2) returns.
	before = snap()
	if err := os.WriteFile(filepath.Join(m.dir, "new"), []byte("appended needle"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runRecfs(t, "cat", src, strconv.Itoa(n))
	if r.code != 0 || r.stdout != "appended needle" {
		t.Fatalf("record %d right after close: exit %d %q %s", n, r.code, r.stdout, r.stderr)
	}
	if d := snap().sub(before); d["FLUSH"] == 0 {
		t.Errorf("creating a record sent no FLUSH (%v)", d)
	}
}
