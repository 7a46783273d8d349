package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/leveldb"
)

// TestLargeDirectory mounts a log of RECFS_TEST_LARGE records (skipped when
// unset; 1000000 is the figure), lists it with ls -l, searches it
// with grep -r, and reports the server's RSS after each. It fails when the
// RSS after both exceeds 200 MiB.
func TestLargeDirectory(t *testing.T) {
	needFUSE(t)
	n, _ := strconv.Atoi(os.Getenv("RECFS_TEST_LARGE"))
	if n <= 0 {
		t.Skip("set RECFS_TEST_LARGE=<records> (e.g. 1000000) to run")
	}
	defer func(d time.Duration) { procTimeout = d }(procTimeout)
	procTimeout = 20 * time.Minute
	src := filepath.Join(t.TempDir(), "large.log")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := leveldb.NewWriter(bw, leveldb.WriterOptions{})
	for i := range n {
		if _, err := w.WriteRecord([]byte(fmt.Sprintf("record %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--no-cache")
	rss := func() int64 {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
				return kb << 10
			}
		}
		return -1
	}
	t.Logf("RSS after mount: %d MiB", rss()>>20)
	start := time.Now()
	r := runCmd(t, "ls", "-l", mnt)
	if got := strings.Count(r.stdout, "\n") - 1; r.code != 0 || got != n {
		t.Fatalf("ls -l: exit %d, %d lines", r.code, got)
	}
	t.Logf("ls -l: %v, RSS %d MiB", time.Since(start), rss()>>20)
	start = time.Now()
	r = runCmd(t, "grep", "-r", "-l", "-x", fmt.Sprintf("record %d", n-1), mnt)
	if r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(mnt, recordName(int64(n-1), int64(n))) {
		t.Fatalf("grep -r: exit %d %q\nstderr: %.2000s\nmount log: %.2000s", r.code, r.stdout, r.stderr, m.stderr)
	}
	after := rss()
	t.Logf("grep -r: %v, RSS %d MiB", time.Since(start), after>>20)
	if after > 200<<20 {
		t.Errorf("RSS %d MiB after ls -l and grep -r exceeds 200 MiB", after>>20)
	}
}
