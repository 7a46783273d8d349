package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTFRecordGzipDecodeStatInterrupted: in a --decode mount, a record's
// size is its rendering's length, so the first stat of a record renders
// it, reading the record (LOOKUP/GETATTR). A stat killed while that read
// decompresses a long span (record 2 follows 8 GiB of zeros in one
// DEFLATE block, so reading it decompresses them all) has the kernel
// interrupt the request: the stat exits, the mount logs the stopped read
// and goes on serving. Both backends. (The record does not decode as an
// Example: the stat is stopped before it would fail.) The server's
// processor time after the kill is logged, not bounded: here it is
// 1.1-1.4 s of the ~2 s the whole span costs, so the sizing read stops
// far later than a read does (TestTFRecordGzipReadInterrupted) — a gap
// still open.
func TestTFRecordGzipDecodeStatInterrupted(t *testing.T) {
	needFUSE(t)
	src, _ := zeroRecordShard(t, busyRuns, []byte("after"))
	eachBackend(t, func(t *testing.T, backend string) {
		// A cache of its own: a saved table's load checks the last
		// record, which would leave record 2's span inflated in memory.
		cache := t.TempDir()
		mnt := newMountDir(t)
		m := startMount(t, src, mnt, "--decode", "example", "--cache-dir", cache, "--backend", backend)
		if _, err := os.ReadFile(filepath.Join(mnt, ".recfs")); err != nil {
			t.Fatal(err)
		}
		stat := exec.Command("stat", filepath.Join(mnt, "2"))
		killWhenBusy(t, m, stat, "stat", 0)
		if _, err := os.ReadFile(filepath.Join(mnt, ".recfs")); err != nil {
			t.Fatalf(".recfs after the interrupted stat: %v", err)
		}
	})
}
