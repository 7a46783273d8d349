package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestLeanListingPastBound: ls -f of a record directory larger than
// --max-inodes, with nothing using the entries, gives the kernel about as
// many inodes as the bound and names alone for the rest (entries with
// nodeid 0), so the ring evicts nothing: before, every listed record got an
// inode and all but the bound were evicted again (a FORGET each). Reading
// the records afterwards still works, by LOOKUP for the names listed alone.
func TestLeanListingPastBound(t *testing.T) {
	needFUSE(t)
	const n, bound = 40000, 4096
	recs := genRecords(11, n, 30)
	src := filepath.Join(t.TempDir(), "many.log")
	recfile.WriteLog(t, src, recs)
	m, snap := countingMount(t, src, "--no-cache", "--max-inodes", strconv.Itoa(bound))
	before := snap()
	r := runCmd(t, "ls", "-f", m.dir)
	if r.code != 0 || strings.Count(r.stdout, "\n") < n {
		t.Fatalf("ls -f: exit %d, %d lines: %s", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	time.Sleep(300 * time.Millisecond) // let queued evictions (if any) reach the kernel
	d := snap().sub(before)
	t.Logf("ls -f of %d records with --max-inodes %d: %v", n, bound, d)
	if d["READDIRPLUS"] == 0 || d["READDIR"] > 0 {
		t.Errorf("ls -f: listed with %d READDIRPLUS and %d READDIR (%v)", d["READDIRPLUS"], d["READDIR"], d)
	}
	if d["FORGET"] > bound/2 {
		t.Errorf("ls -f: %d FORGET for %d records with a bound of %d (%v): the listing built inodes nobody used", d["FORGET"], n, bound, d)
	}
	// Records listed by name alone are looked up when used, and read right.
	for _, i := range []int{0, bound - 1, bound + 1, n / 2, n - 1} {
		b, err := os.ReadFile(filepath.Join(m.dir, recordName(int64(i), n)))
		if err != nil || !bytes.Equal(b, recs[i]) {
			t.Fatalf("record %d after ls -f: %q, %v; want %q", i, b, err, recs[i])
		}
	}
	if d2 := snap().sub(before); d2["LOOKUP"] == 0 {
		t.Errorf("reads of records listed without entries sent no LOOKUP (%v)", d2)
	}
}
