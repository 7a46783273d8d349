package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// scaleBudgetKB is the server's memory budget at ten million records.
const scaleBudgetKB = 300 << 10

// writeSeqLog writes the records "1".."n" (what `seq n | recfs append
// --lines` makes) as a leveldb log at path.
func writeSeqLog(t *testing.T, path string, n int) {
	t.Helper()
	writeLogOf(t, path, n, func(b []byte, i int) []byte { return strconv.AppendInt(b[:0], int64(i+1), 10) })
}

// writeLogOf writes n records as a leveldb log at path, record i made by
// rec (into the buffer it is given back).
func writeLogOf(t *testing.T, path string, n int, rec func(b []byte, i int) []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := leveldb.NewWriter(bw, leveldb.WriterOptions{})
	var b []byte
	for i := range n {
		b = rec(b, i)
		if _, err := w.WriteRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTenMillionRecordsMemory (../shared/repro/17; `make soak` only, about
// 3 minutes): a 10,000,000-record log is indexed at mount, with and without
// --follow, and listed whole, and `recfs index --rebuild` builds and saves
// its index, each within the server's 300 MB budget (peak resident size,
// the source's mapped pages included). CI checks the rule behind it —
// bytes allocated per record while a table is built — in index's
// TestBuildAllocatesTableOnce.
func TestTenMillionRecordsMemory(t *testing.T) {
	if !soak() {
		t.Skip("10M records: make soak (RECFS_SOAK=1)")
	}
	needFUSE(t)
	const n = 10_000_000
	src := filepath.Join(t.TempDir(), "f.log")
	writeSeqLog(t, src, n)

	c := exec.Command(bin, "index", "--rebuild", "--cache-dir", t.TempDir(), src)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("recfs index: %v\n%s", err, out)
	}
	peak := c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	t.Logf("recfs index --rebuild: peak RSS %d MB (limit %d MB)", peak>>10, scaleBudgetKB>>10)
	if peak > scaleBudgetKB {
		t.Errorf("recfs index --rebuild: peak RSS %d MB, want under %d MB", peak>>10, scaleBudgetKB>>10)
	}

	for _, mode := range []string{"", "--follow"} {
		mnt := newMountDir(t)
		args := []string{"--no-cache"}
		if mode != "" {
			args = append(args, mode)
		}
		m := startMount(t, src, mnt, args...)
		pid := m.cmd.Process.Pid
		fired := guardRSS(t, pid)
		checkHWM(t, pid, scaleBudgetKB, "mount "+mode+": indexed")
		r := runCmd(t, "sh", "-c", "ls -f "+mnt+" | wc -l")
		if got, _ := strconv.Atoi(strings.TrimSpace(r.stdout)); r.code != 0 || got != n+3 {
			t.Fatalf("ls -f: %q, exit %d: want %d entries", r.stdout, r.code, n+3)
		}
		checkHWM(t, pid, scaleBudgetKB, "mount "+mode+": listed")
		if fired() {
			t.Fatalf("server passed %d MB resident and was killed", guardKB>>10)
		}
		unmountAndWait(t, m)
	}
}
