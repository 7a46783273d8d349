package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManyRecordsStayCached: a record directory larger than the kernel
// inode bound the server used to keep (131,072 nodes, the oldest pruned)
// costs per record what a small one costs. ls -l and ls -f get their
// entries from the listing (no LOOKUP, no GETATTR per record), and a
// second grep -r over all of it sends nothing per record: the kernel keeps
// every inode and page, as it does for tmpfs, and the server keeps nothing
// per record. Before, every pass past the bound rebuilt inodes: a LOOKUP
// (or a listing entry), a READ and a FORGET per record, each pass.
func TestManyRecordsStayCached(t *testing.T) {
	needFUSE(t)
	n := 140000
	if testing.Short() {
		n = 20000
	}
	recs := genRecords(17, n, 12)
	src := tempLog(t, "many.log", recs)
	m, snap := countingMount(t, src)
	per := func(what string, d opCounts, ops ...string) {
		t.Helper()
		for _, op := range ops {
			if d[op] > int64(n/100) {
				t.Errorf("%s of %d records: %d %s (%v), want none per record", what, n, d[op], op, d)
			}
		}
	}

	ls := func(m *mount, flag string) {
		t.Helper()
		r := runCmd(t, "ls", flag, m.dir)
		if r.code != 0 || strings.Count(r.stdout, "\n") < n {
			t.Fatalf("ls %s: exit %d, %d lines: %s", flag, r.code, strings.Count(r.stdout, "\n"), r.stderr)
		}
	}
	before := snap()
	ls(m, "-l")
	ls(m, "-f")
	d := snap().sub(before)
	t.Logf("ls -l + ls -f of %d records: %v", n, d)
	if d["READDIRPLUS"] == 0 || d["READDIR"] > 0 {
		t.Errorf("listed with %d READDIRPLUS and %d READDIR (%v)", d["READDIRPLUS"], d["READDIR"], d)
	}
	per("ls -l + ls -f", d, "LOOKUP", "GETATTR", "FORGET")

	grep := func() {
		t.Helper()
		r := runCmd(t, "grep", "-r", "-c", "", m.dir)
		if r.code != 0 || strings.Count(r.stdout, "\n") != n+1 {
			t.Fatalf("grep -r -c: exit %d, %d lines (want %d): %s", r.code, strings.Count(r.stdout, "\n"), n+1, r.stderr)
		}
	}
	grep()
	before = snap()
	grep()
	d = snap().sub(before)
	t.Logf("warm grep -r of %d records: %v", n, d)
	per("warm grep -r", d, "LOOKUP", "GETATTR", "READ", "FORGET", "OPEN", "READDIRPLUS")

	for _, i := range []int{0, 131071, 131073, n / 2, n - 1} {
		if i >= n {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.dir, recordName(int64(i), int64(n))))
		if err != nil || !bytes.Equal(b, recs[i]) {
			t.Fatalf("record %d: %q, %v; want %q", i, b, err, recs[i])
		}
	}

	if n <= leanAfter {
		return
	}
	// ls -f alone uses none of its entries: past leanAfter records the
	// names go out alone (no kernel inode each), and a record listed so
	// is looked up when used.
	m2, snap2 := countingMount(t, src)
	ls(m2, "-f")
	before = snap2()
	for _, i := range []int{0, n - 1} {
		b, err := os.ReadFile(filepath.Join(m2.dir, recordName(int64(i), int64(n))))
		if err != nil || !bytes.Equal(b, recs[i]) {
			t.Fatalf("record %d after ls -f: %q, %v; want %q", i, b, err, recs[i])
		}
		if d := snap2().sub(before); (d["LOOKUP"] > 0) != (i >= leanAfter) {
			t.Errorf("record %d after ls -f of %d: %d LOOKUP, want them only past the first %d (%v)", i, n, d["LOOKUP"], leanAfter, d)
		}
	}
}

// leanAfter is fs/gofuse's count of record entries listed without use
// after which listings give names alone.
const leanAfter = 1 << 17
