package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRWCreateRoundTrips: a file created, written and closed in a --rw
// mount (what `echo > NAME` and os.WriteFile do) costs the kernel's
// minimum: LOOKUP of the new name, CREATE, WRITE and FLUSH synchronously
// (close(2) returns with the record in the source), RELEASE after it, and
// nothing else (no GETATTR, OPEN, SETATTR or READ); every close appended
// its record.
func TestRWCreateRoundTrips(t *testing.T) {
	needFUSE(t)
	const n = 200
	src := tempLog(t, "rw.log", [][]byte{[]byte("first")})
	m, snap := countingMount(t, src, "--no-cache", "--rw")
	before := snap()
	for i := range n {
		if err := os.WriteFile(filepath.Join(m.dir, fmt.Sprintf("new-%d", i)), fmt.Appendf(nil, "record %d", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var d opCounts
	// RELEASE is asynchronous: wait for the last one to be answered.
	waitFor(t, 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		d = snap().sub(before)
		return d["RELEASE"] >= n, fmt.Sprintf("%d RELEASE for %d files (%v)", d["RELEASE"], n, d)
	})
	t.Logf("%d files created and closed through a --rw mount: %v", n, d)
	for _, op := range []string{"CREATE", "WRITE", "FLUSH", "RELEASE"} {
		if d[op] != n {
			t.Errorf("%d %s for %d created files, want one each (%v)", d[op], op, n, d)
		}
	}
	if d["LOOKUP"] > n {
		t.Errorf("%d LOOKUP for %d created files, want at most one each (%v)", d["LOOKUP"], n, d)
	}
	var other int64
	for op, c := range d {
		switch op {
		case "CREATE", "WRITE", "FLUSH", "RELEASE", "LOOKUP", "FORGET":
		default:
			other += c
		}
	}
	if other > 2 {
		t.Errorf("%d other requests for %d created files (%v): want none per file", other, n, d)
	}
	if got := recordCount(t, src); got != 1+n {
		t.Errorf("%d records in the source after %d closes, want %d", got, n, 1+n)
	}
}
