package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/tfrecord"
)

// TestRecordFsyncSyncsSource: fsync(2) of a record file in a --rw mount
// makes the source durable — a close appended the record without a sync —
// so strace of the daemon sees an fsync while the reader's fsync runs,
// both backends.
func TestRecordFsyncSyncsSource(t *testing.T) {
	needFUSE(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed (.ci/run installs it): cannot see the daemon's fsyncs")
	}
	eachBackend(t, func(t *testing.T, backend string) {
		_, mnt, m, _ := mountRW(t, backend, "w.tfrecord", tfrecord.AppendRecord(nil, []byte("first")), 1)
		if err := os.WriteFile(filepath.Join(mnt, "new.bin"), []byte("closed, not synced"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(mnt, recordName(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()

		trace := filepath.Join(t.TempDir(), "trace")
		ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
		defer cancel()
		pid := m.cmd.Process.Pid
		st := exec.CommandContext(ctx, strace, "-f", "-qq", "-p", fmt.Sprint(pid),
			"-e", "trace=fsync,fdatasync", "-o", trace)
		var stderr bytes.Buffer
		st.Stderr = &stderr
		if err := st.Start(); err != nil {
			t.Fatal(err)
		}
		waitTraced(t, pid)
		if err := f.Sync(); err != nil {
			t.Fatalf("fsync of a record: %v", err)
		}
		_ = st.Process.Signal(syscall.SIGINT) // detach
		_ = st.Wait()
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatalf("%v\nstrace: %s", err, stderr.String())
		}
		if n := strings.Count(string(b), "fsync("); n < 1 {
			t.Errorf("the daemon made %d fsyncs while a record's fsync(2) ran, want at least 1; trace:\n%s", n, b)
		}
	})
}

// waitTraced waits, with a bound, until every thread of process pid has a
// tracer.
func waitTraced(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(mountTimeout)
	for {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		if err != nil || len(tasks) == 0 {
			t.Fatalf("threads of %d: %v", pid, err)
		}
		all := true
		for _, st := range tasks {
			b, err := os.ReadFile(st)
			if err != nil || strings.Contains(string(b), "\nTracerPid:\t0\n") {
				all = false
				break
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("strace did not attach to every thread of %d", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
