package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bombFile is a 688 KB recordio file of 20 zstd blocks, each one item of
// 255 MiB: byte i (the record number) followed by zeros.
const bombFile = "../../../shared/repro/bomb_zstd_20x255M.rio"

// Memory bounds of the tests in this file.
const (
	// memSlackKB is what a server may use beyond its configured budgets
	// (runtime, FUSE buffers, garbage not yet collected).
	memSlackKB = 200 << 10
	// guardKB is the resident size at which a watchdog kills a process
	// under test, so no test can take the shared machine down.
	guardKB = 3 << 20
)

// procStatusKB returns a "Vm...:" field of /proc/PID/status in KiB.
func procStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// guardRSS kills pid if its resident size passes guardKB; the returned
// function stops the watchdog and reports whether it fired.
func guardRSS(t *testing.T, pid int) func() bool {
	t.Helper()
	var fired atomic.Bool
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			kb, err := procStatusKB(pid, "VmRSS")
			if err != nil {
				return
			}
			if kb > guardKB {
				fired.Store(true)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				return
			}
		}
	}()
	var once atomic.Bool
	done := func() bool {
		if once.CompareAndSwap(false, true) {
			close(stop)
		}
		return fired.Load()
	}
	t.Cleanup(func() { done() })
	return done
}

// checkHWM fails the test when pid's peak resident size passed limitKB.
func checkHWM(t *testing.T, pid int, limitKB int64, what string) {
	t.Helper()
	kb, err := procStatusKB(pid, "VmHWM")
	if err != nil {
		t.Fatalf("%s: %v (the server died?)", what, err)
	}
	t.Logf("%s: server VmHWM %d MB (limit %d MB)", what, kb>>10, limitKB>>10)
	if kb > limitKB {
		t.Errorf("%s: server peak RSS %d MB, want under %d MB", what, kb>>10, limitKB>>10)
	}
}

// readHeads reads the first 4 KiB of every record of dir and checks the
// first byte (the record number, as bombFile was made). fired is the
// server's watchdog.
func readHeads(t *testing.T, dir string, fired func() bool) {
	t.Helper()
	defer func() {
		if fired() {
			t.Errorf("server passed %d MB resident and was killed", guardKB>>10)
		}
	}()
	names := recordNames(t, dir)
	if len(names) != 20 {
		t.Fatalf("%s: %d records, want 20", dir, len(names))
	}
	buf := make([]byte, 4096)
	for i, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		k, err := io.ReadFull(f, buf)
		f.Close()
		if err != nil || k != len(buf) {
			t.Fatalf("%s/%s: read %d, %v", dir, n, k, err)
		}
		want := make([]byte, 4096)
		want[0] = byte(i)
		if !bytes.Equal(buf, want) {
			t.Fatalf("%s/%s: wrong first 4 KiB", dir, n)
		}
	}
}

// bombSum is the sha256 of record i of bombFile, computed by streaming.
func bombSum(i int, size int64) [32]byte {
	h := sha256.New()
	zero := make([]byte, 1<<20)
	h.Write([]byte{byte(i)})
	for left := size - 1; left > 0; left -= int64(len(zero)) {
		h.Write(zero[:min(left, int64(len(zero)))])
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// TestBombMemory: a 688 KB zstd recordio file whose 20 blocks each decode
// to 255 MiB is served within the mount's decoded-data budget
// (--cache-mem, 256 MiB by default) shared by every file: reading the head
// of each record, in one file and in two files of a tree, and streaming a
// whole 255 MiB record.
func TestBombMemory(t *testing.T) {
	needFUSE(t)
	if _, err := os.Stat(bombFile); err != nil {
		t.Skipf("no bomb file: %v", err)
	}
	const budgetKB = 256 << 10
	t.Run("file", func(t *testing.T) {
		dir := newMountDir(t)
		m := startMount(t, bombFile, dir, "--no-cache")
		pid := m.cmd.Process.Pid
		fired := guardRSS(t, pid)
		readHeads(t, dir, fired)
		if fired() {
			t.Fatalf("server passed %d MB resident and was killed", guardKB>>10)
		}
		checkHWM(t, pid, budgetKB+memSlackKB, "heads of 20 records")

		// A whole record, in the kernel's read sizes, in order: the
		// stream continues, so this is linear (a restart per read would
		// take minutes) and holds no whole block.
		name := filepath.Join(dir, recordNames(t, dir)[7])
		st, err := os.Stat(name)
		if err != nil || st.Size() != 255<<20 {
			t.Fatalf("stat %s: %v, size %d", name, err, st.Size())
		}
		fired = guardRSS(t, pid)
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		start := time.Now()
		n, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil || n != st.Size() {
			t.Fatalf("read %s: %d bytes, %v", name, n, err)
		}
		if fired() {
			t.Fatalf("server passed %d MB resident and was killed", guardKB>>10)
		}
		if got, want := h.Sum(nil), bombSum(7, n); !bytes.Equal(got, want[:]) {
			t.Fatalf("record 7: sha256 %x, want %x", got, want)
		}
		t.Logf("read 255 MiB in %v", time.Since(start))
		checkHWM(t, pid, budgetKB+memSlackKB, "whole record")
	})
	t.Run("tree", func(t *testing.T) {
		src := t.TempDir()
		data, err := os.ReadFile(bombFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a.rio", "b.rio"} {
			if err := os.WriteFile(filepath.Join(src, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dir := newMountDir(t)
		// A smaller budget, shared by the two files.
		m := startMount(t, src, dir, "--no-cache", "--cache-mem", "64M")
		pid := m.cmd.Process.Pid
		fired := guardRSS(t, pid)
		for round := 0; round < 2; round++ {
			readHeads(t, filepath.Join(dir, "a.rio"), fired)
			readHeads(t, filepath.Join(dir, "b.rio"), fired)
		}
		if fired() {
			t.Fatalf("server passed %d MB resident and was killed", guardKB>>10)
		}
		checkHWM(t, pid, 64<<10+memSlackKB, "heads of 2 x 20 records")
	})
}

// TestPendingFilesMemory: in a --rw mount, files being written (each up to
// the per-file 8 MiB kept in memory) share one in-memory budget
// (--pending-mem, 64 MiB by default); beyond it they go to temporary files.
// Many such files open at once keep the server near that budget, and the
// ones closed become records with their bytes.
func TestPendingFilesMemory(t *testing.T) {
	needFUSE(t)
	files, size := 100, 8<<20-1
	if soak() {
		files = 300
	}
	src := tempLog(t, "p.log", [][]byte{[]byte("seed")})
	dir := newMountDir(t)
	m := startMount(t, src, dir, "--rw", "--no-cache")
	pid := m.cmd.Process.Pid
	fired := guardRSS(t, pid)
	content := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 'p'}, size/3+1)[:size] }
	var fs []*os.File
	defer func() {
		for _, f := range fs {
			f.Close()
		}
	}()
	for i := range files {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("p%d", i)), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatalf("create %d: %v (watchdog fired: %v)", i, err, fired())
		}
		fs = append(fs, f)
		if _, err := f.Write(content(i)); err != nil {
			t.Fatalf("write %d: %v (watchdog fired: %v)", i, err, fired())
		}
	}
	if fired() {
		t.Fatalf("server passed %d MB resident and was killed", guardKB>>10)
	}
	checkHWM(t, pid, 64<<10+memSlackKB, fmt.Sprintf("%d pending files of %d MiB", files, size>>20))
	// Three become records (one of them spilled for sure: the budget
	// holds at most 8 files); the rest are removed, then closed.
	keep := []int{0, files / 2, files - 1}
	for _, i := range keep {
		if err := fs[i].Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
		fs[i] = nil
	}
	for i, f := range fs {
		if f == nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf("p%d", i))); err != nil {
			t.Fatal(err)
		}
		f.Close()
		fs[i] = nil
	}
	names := recordNames(t, dir)
	if len(names) != 1+len(keep) {
		t.Fatalf("records %v, want the seed and %d appended", names, len(keep))
	}
	for j, i := range keep {
		got, err := os.ReadFile(filepath.Join(dir, names[1+j]))
		if err != nil || !bytes.Equal(got, content(i)) {
			t.Errorf("record %s (file p%d): %d bytes, %v; content differs", names[1+j], i, len(got), err)
		}
	}
	checkHWM(t, pid, 64<<10+memSlackKB, "after the appends")
}

// runMeasured runs a recfs command under the RSS watchdog and returns its
// result and peak resident size in KiB.
func runMeasured(t *testing.T, stdout io.Writer, args ...string) (int64, string) {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Stdout = stdout
	return runMeasuredCmd(t, c)
}

// runMeasuredCmd is runMeasured of a prepared recfs command (its stderr is
// returned).
func runMeasuredCmd(t *testing.T, c *exec.Cmd) (int64, string) {
	t.Helper()
	args := c.Args[1:]
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	fired := guardRSS(t, c.Process.Pid)
	// The peak is the child's own VmHWM, sampled while it runs: the
	// rusage of a child started by vfork+exec also counts the test
	// process's peak at the exec (Linux keeps the old mm's high-water
	// mark), so after other tests it reported the test binary's 111 MB.
	var hwm atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			kb, err := procStatusKB(c.Process.Pid, "VmHWM")
			if err != nil {
				return
			}
			if kb > hwm.Load() {
				hwm.Store(kb)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	timer := time.AfterFunc(procTimeout, func() { _ = c.Process.Kill() })
	err := c.Wait()
	timer.Stop()
	<-sampled
	if fired() {
		t.Fatalf("recfs %q passed %d MB resident and was killed", args, guardKB>>10)
	}
	if err != nil {
		t.Fatalf("recfs %q: %v\n%s", args, err, errb.String())
	}
	if kb := hwm.Load(); kb > 0 {
		return kb, errb.String()
	}
	// Too short to sample: the rusage figure, an upper bound.
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return ru.Maxrss, errb.String()
}

// TestAppendLargeMemory: `recfs append` of one large record (256 MiB; 1 GiB
// under soak) into a recordio file and a leveldb log streams it: the
// command's peak RSS stays far below the record size, and the record reads
// back byte for byte.
func TestAppendLargeMemory(t *testing.T) {
	needBinary(t)
	size := int64(256 << 20)
	if soak() {
		size = 1 << 30
	}
	const limitKB = 100 << 10
	dir := t.TempDir()
	// The input: pseudo-random bytes (incompressible), hashed as written.
	in := filepath.Join(dir, "big.bin")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		for i := 0; i < len(buf); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
		}
		b := buf[:min(left, int64(len(buf)))]
		h.Write(b)
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	want := h.Sum(nil)
	for _, format := range []string{"recordio", "leveldb"} {
		t.Run(format, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			seed := filepath.Join(dir, "seed")
			if err := os.WriteFile(seed, []byte("seed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := runRecfs(t, "append", "--create", format, dst, seed); r.code != 0 {
				t.Fatalf("create: %s", r.stderr)
			}
			start := time.Now()
			rss, _ := runMeasured(t, io.Discard, "append", dst, in)
			t.Logf("append of %d MiB: peak RSS %d MB, %v", size>>20, rss>>10, time.Since(start))
			if rss > limitKB {
				t.Errorf("recfs append of a %d MiB record peaked at %d MB RSS, want under %d MB", size>>20, rss>>10, limitKB>>10)
			}
			hr := sha256.New()
			cw := &countingWriter{w: hr}
			rss, _ = runMeasured(t, cw, "cat", "--no-cache", dst, "1")
			if cw.n != size || !bytes.Equal(hr.Sum(nil), want) {
				t.Fatalf("record 1 read back: %d bytes, sha256 %x; want %d bytes, %x", cw.n, hr.Sum(nil), size, want)
			}
			t.Logf("cat: peak RSS %d MB (mapped source pages of the index scan included)", rss>>10)
		})
	}
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
