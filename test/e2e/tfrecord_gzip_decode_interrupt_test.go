package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTFRecordGzipDecodeStatInterrupted: in a --decode mount, a record's
// size is its rendering's length, so the first stat of a record renders
// it, reading the record (LOOKUP/GETATTR). A stat killed while that read
// decompresses a long span (record 2 follows 4 GiB of zeros in one
// DEFLATE block, so reading it decompresses them all) has the kernel
// interrupt the request, which stops the decompression: the mount logs
// the stopped read, uses at most interruptCPU of processor time after
// the kill, and goes on serving. Both backends. (The record does not
// decode as an Example: the stat is stopped before it would fail.)
func TestTFRecordGzipDecodeStatInterrupted(t *testing.T) {
	needFUSE(t)
	src, _ := zeroRecordShard(t, 16_000_000, []byte("after"))
	eachBackend(t, func(t *testing.T, backend string) {
		// A cache of its own: a saved table's load checks the last
		// record, which would leave record 2's span inflated in memory.
		cache := t.TempDir()
		mnt := newMountDir(t)
		m := startMount(t, src, mnt, "--decode", "example", "--cache-dir", cache, "--backend", backend)
		if _, err := os.ReadFile(filepath.Join(mnt, ".recfs")); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		stat := exec.Command("stat", filepath.Join(mnt, "2"))
		stat.Stdout, stat.Stderr = &out, &out
		server := m.cmd.Process.Pid
		before, err := cpuOf(server)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		if err := stat.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- stat.Wait() }()
		var at time.Duration
		for at-before < 300*time.Millisecond {
			select {
			case err := <-done:
				t.Fatalf("stat ended (%v: %s) before the server had spent 300ms on its record: give it more to do; the mount's stderr:\n%s", err, out.String(), m.stderr)
			case <-time.After(2 * time.Millisecond):
			}
			if at, err = cpuOf(server); err != nil {
				t.Fatal(err)
			}
		}
		if err := stat.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(exitTimeout):
			t.Fatalf("the killed stat still waits %v after the kill", exitTimeout)
		}
		if !m.logSays("decompression stopped", exitTimeout) {
			t.Fatalf("no log line of the stopped read; the mount's stderr:\n%s", m.stderr)
		}
		after, err := cpuOf(server)
		if err != nil {
			t.Fatal(err)
		}
		if used := after - at; used > interruptCPU {
			t.Errorf("the server used %v of processor time after the stat was killed, want at most %v", used, interruptCPU)
		}
		if _, err := os.ReadFile(filepath.Join(mnt, ".recfs")); err != nil {
			t.Fatalf(".recfs after the interrupted stat: %v", err)
		}
	})
}
