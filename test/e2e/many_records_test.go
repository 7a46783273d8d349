package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
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
	src := filepath.Join(t.TempDir(), "many.log")
	recfile.WriteLog(t, src, recs)
	m, snap := countingMount(t, src)
	per := func(what string, d opCounts, ops ...string) {
		t.Helper()
		for _, op := range ops {
			if d[op] > int64(n/100) {
				t.Errorf("%s of %d records: %d %s (%v), want none per record", what, n, d[op], op, d)
			}
		}
	}

	before := snap()
	r := runCmd(t, "ls", "-f", m.dir)
	if r.code != 0 || strings.Count(r.stdout, "\n") < n {
		t.Fatalf("ls -f: exit %d, %d lines: %s", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	r = runCmd(t, "ls", "-l", m.dir)
	if r.code != 0 || strings.Count(r.stdout, "\n") < n {
		t.Fatalf("ls -l: exit %d, %d lines: %s", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	d := snap().sub(before)
	t.Logf("ls -f + ls -l of %d records: %v", n, d)
	if d["READDIRPLUS"] == 0 || d["READDIR"] > 0 {
		t.Errorf("listed with %d READDIRPLUS and %d READDIR (%v)", d["READDIRPLUS"], d["READDIR"], d)
	}
	per("ls -f + ls -l", d, "LOOKUP", "GETATTR", "FORGET")

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
}
