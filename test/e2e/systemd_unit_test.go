package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/test/internal/syncbuf"
)

// readmeUnit returns the systemd unit the README shows (the ini block
// that starts with its file name).
func readmeUnit(t *testing.T) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme(t), "```ini\n# /etc/systemd/system/recfs-wal.service\n")
	if !ok {
		t.Fatal("README has no ini block for /etc/systemd/system/recfs-wal.service")
	}
	unit, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("the README's unit block does not end")
	}
	return unit
}

// unitLines returns the values of the unit's lines key=... in order.
func unitLines(unit, key string) []string {
	var out []string
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestReadmeSystemdUnit: the README's unit passes systemd-analyze verify
// (its paths pointed at a test directory and the binary under test), and
// its commands do what the README says: ExecStartPre makes the mount
// point, ExecStart mounts the database directory with each log decoded,
// .recfs says which decoder and that sizes are the text's, a log that
// appears later shows up, and ExecStopPost is silent and
// succeeds whether the mount is still there or already gone.
func TestReadmeSystemdUnit(t *testing.T) {
	needFUSE(t)
	t.Parallel()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("no systemd-analyze (Debian package systemd; .ci/run installs it)")
	}
	unit := readmeUnit(t)
	for _, want := range []string{"RequiresMountsFor=/var/lib/db", "ExecStartPre=/usr/bin/mkdir -p /mnt/wal", "--gid 1000", "--follow --decode auto", "unmount --if-mounted /mnt/wal"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the README's unit lacks %q", want)
		}
	}
	tmp := t.TempDir()
	db, mnt := filepath.Join(tmp, "db"), filepath.Join(tmp, "wal")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	recfile.WriteLog(t, filepath.Join(db, "000005.log"), [][]byte{codectest.PutBatch(7, "k", "v")})
	recfile.WriteFile(t, filepath.Join(db, "LOCK"), nil)
	unit = strings.NewReplacer("/usr/local/bin/recfs", bin, "/var/lib/db", db, "/mnt/wal", mnt).Replace(unit)
	path := filepath.Join(tmp, "recfs-wal.service")
	recfile.WriteFile(t, path, []byte(unit))
	if r := runCmd(t, "systemd-analyze", "verify", path); r.code != 0 || r.stderr != "" {
		t.Fatalf("systemd-analyze verify of the README's unit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	run := func(line string) result {
		f := strings.Fields(strings.TrimPrefix(line, "-"))
		return runCmd(t, f[0], f[1:]...)
	}
	for _, l := range unitLines(unit, "ExecStartPre") {
		if r := run(l); r.code != 0 {
			t.Fatalf("ExecStartPre=%s: exit %d %s", l, r.code, r.stderr)
		}
	}
	start := unitLines(unit, "ExecStart")
	if len(start) != 1 {
		t.Fatalf("ExecStart lines %q", start)
	}
	f := strings.Fields(start[0])
	c := exec.Command(f[0], f[1:]...)
	var stderr syncbuf.Buffer
	c.Stderr = &stderr
	mountDirs.Store(mnt, true)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() {
		detachIfMounted(mnt)
		_ = c.Process.Kill()
		<-done
	})
	waitUntil(t, func() (bool, string) {
		return mountedAt(mnt) == "fuse.recfs", "not mounted yet; stderr " + stderr.String()
	})
	const text5 = "batch seq 7 count 1\nput k v\n"
	if b, err := os.ReadFile(filepath.Join(mnt, "000005.log", "000000")); err != nil || string(b) != text5 {
		t.Errorf("the first log's record through the unit's mount: %q %v", b, err)
	}
	// .recfs names the decoder and says whose sizes the mount shows; du -b
	// adds up the text (the README's words).
	info := infoLines(t, filepath.Join(mnt, "000005.log", ".recfs"))
	if d := strings.Join(info["decode"], "|"); !strings.HasPrefix(d, "batch (auto: ") {
		t.Errorf(".recfs decode: %q", d)
	}
	if got := strings.Join(info["sizes"], "|"); got != "of the decoded text (ls -l, du -b); bytes and file size are of the source" {
		t.Errorf(".recfs sizes: %q", got)
	}
	if r := runCmd(t, "du", "-b", filepath.Join(mnt, "000005.log", "000000")); r.code != 0 || !strings.HasPrefix(r.stdout, fmt.Sprintf("%d\t", len(text5))) {
		t.Errorf("du -b of a decoded record: %q %s, want %d (its text)", r.stdout, r.stderr, len(text5))
	}
	// The database flushes: a new log appears beside the old one.
	recfile.WriteLog(t, filepath.Join(db, "000009.log"), [][]byte{codectest.PutBatch(8, "k2", "v2")})
	waitUntil(t, func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(mnt, "000009.log", "000000"))
		return err == nil && string(b) == "batch seq 8 count 1\nput k2 v2\n", "the new log: " + string(b)
	})

	stop := unitLines(unit, "ExecStopPost")
	if len(stop) != 1 {
		t.Fatalf("ExecStopPost lines %q", stop)
	}
	// systemd stops the service with SIGTERM; the mount ends with it.
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(exitTimeout):
		t.Fatalf("the unit's mount still runs %v after SIGTERM", exitTimeout)
	}
	for i := 0; i < 2; i++ {
		if r := run(stop[0]); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("ExecStopPost=%s after the stop: exit %d, stdout %q, stderr %q; want 0 and silence", stop[0], r.code, r.stdout, r.stderr)
		}
	}
	if got := mountedAt(mnt); got != "" {
		t.Errorf("%s still mounted (%s)", mnt, got)
	}
}
