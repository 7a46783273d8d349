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
// works on a long span (record 2 follows 8 GiB of zeros in one DEFLATE
// block, so reading it decompresses them all) has the kernel interrupt
// the request: the stat exits, the mount logs the stopped read, reads at
// most busyKillRead bytes after the kill, and goes on serving.
// Both backends. (The record does not decode as an Example: the stat is
// stopped before it would fail.) A fresh read's decoder first reads the
// span's compressed bytes (52 MB here) into memory; that read once ran
// to its end whatever the interrupt (49 MiB of the source read after the
// kill, the log line naming decompressed offset 0).
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
		killWhenBusy(t, m, stat, "stat", busyKillRead)
		if _, err := os.ReadFile(filepath.Join(mnt, ".recfs")); err != nil {
			t.Fatalf(".recfs after the interrupted stat: %v", err)
		}
	})
}
