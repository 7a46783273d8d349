package e2e

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// How soon an interrupted command stops: at most interruptCPU of processor
// time after the signal (what it spends, not how long a busy machine makes
// it wait), and exitTimeout of wall time whatever the load.
const interruptCPU = 500 * time.Millisecond

// cpuOf returns the processor time pid has used so far.
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil // USER_HZ = 100
}

// usedCPU returns the processor time an exited process used in all.
func usedCPU(ps *os.ProcessState) time.Duration {
	ru := ps.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// signalBusy waits until the process c started has used at least busy of
// processor time (so that it is well into its work), sends it sig, waits
// for it, and returns the processor time it used after the signal and its
// wall time to exit. done delivers c.Wait's result.
func signalBusy(t *testing.T, c *exec.Cmd, done <-chan error, busy time.Duration, sig syscall.Signal) (cpu, wall time.Duration) {
	t.Helper()
	var at time.Duration
	for {
		select {
		case err := <-done:
			t.Fatalf("%q ended (%v) before it had used %v of processor time: give it more to do", c.Args, err, busy)
		case <-time.After(2 * time.Millisecond):
		}
		var err error
		if at, err = cpuOf(c.Process.Pid); err == nil && at >= busy {
			break
		}
	}
	start := time.Now()
	if err := c.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(exitTimeout):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("%q still running %v after %v", c.Args, exitTimeout, sig)
	}
	return usedCPU(c.ProcessState) - at, time.Since(start)
}

// bigInputs writes, once per test, the inputs the interrupted commands
// work on: 512 MiB of random bytes (every scan is all damage) and a
// leveldb log of 6M records, alone in its directory.
func bigInputs(t *testing.T) (garbage, log string) {
	t.Helper()
	dir := t.TempDir()
	garbage = filepath.Join(dir, "garbage.bin")
	f, err := os.Create(garbage)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{7})
	if _, err := io.CopyN(f, rng, 512<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(t.TempDir(), "big.log")
	writeLogOf(t, log, 6_000_000, func(b []byte, _ int) []byte { return append(b[:0], "0123456789abcdef"...) })
	return garbage, log
}

// TestInterrupt: every long command (index builds of every format, over
// records and over damage, verify, cat, a mount indexing its file) stops
// soon after SIGINT or SIGTERM, says "interrupted" once and exits 1; a
// tree mount told to stop while a listing waits for a file's index ends
// the build and unmounts.
func TestInterrupt(t *testing.T) {
	garbage, log := bigInputs(t)
	cache := t.TempDir()
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
	cases := [][]string{
		{"index", "--rebuild", "--cache-dir", cache, log},
		{"index", "--rebuild", "--cache-dir", cache, "--format", "leveldb", garbage},
		{"index", "--rebuild", "--cache-dir", cache, "--format", "tfrecord", garbage},
		{"index", "--rebuild", "--cache-dir", cache, "--format", "recordio", garbage},
		{"index", "--rebuild", "--cache-dir", cache, "--format", "recordio-legacy", garbage},
		{"info", "--no-cache", "--format", "tfrecord", garbage},
		{"verify", log},
		{"verify", "--format", "tfrecord", garbage},
		{"cat", log},
		{"cat", "--no-cache", log, "0-", "--sep", `\n`},
	}
	for i, args := range cases {
		sig := sigs[i%2]
		t.Run(strings.Join(args[:1], " ")+"-"+strconv.Itoa(i), func(t *testing.T) {
			c := exec.Command(bin, args...)
			var stderr bytes.Buffer
			c.Stdout, c.Stderr = io.Discard, &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			cpu, wall := signalBusy(t, c, done, 150*time.Millisecond, sig)
			t.Logf("%v: stopped after %v of processor time, %v", sig, cpu, wall)
			if cpu > interruptCPU {
				t.Errorf("%q went on for %v of processor time after %v, want at most %v", args, cpu, sig, interruptCPU)
			}
			if c.ProcessState.ExitCode() != 1 || strings.Count(stderr.String(), "interrupted") != 1 || !strings.Contains(stderr.String(), "recfs: interrupted") {
				t.Errorf("%q after %v: exit %d, stderr %q; want 1 and \"recfs: interrupted\" once", args, sig, c.ProcessState.ExitCode(), stderr.String())
			}
		})
	}

	t.Run("mount", func(t *testing.T) {
		needFUSE(t)
		mnt := newMountDir(t)
		m := launchMount(t, log, mnt, "--no-cache")
		done := make(chan error, 1)
		go func() { <-m.done; done <- m.err }()
		cpu, _ := signalBusy(t, m.cmd, done, 150*time.Millisecond, syscall.SIGTERM)
		if m.cmd.ProcessState.ExitCode() != 1 || strings.Count(m.stderr.String(), "interrupted") != 1 || mountedAt(mnt) != "" {
			t.Fatalf("mount stopped while indexing: exit %d, mounted %q, stderr %q", m.cmd.ProcessState.ExitCode(), mountedAt(mnt), m.stderr)
		}
		if cpu > interruptCPU {
			t.Errorf("mount went on for %v of processor time after SIGTERM", cpu)
		}
	})

	t.Run("tree-mount", func(t *testing.T) {
		needFUSE(t)
		mnt := newMountDir(t)
		m := startMount(t, filepath.Dir(log), mnt, "--no-cache")
		ls := exec.Command("ls", "-f", filepath.Join(mnt, "big.log"))
		ls.Stdout = io.Discard
		if err := ls.Start(); err != nil {
			t.Fatal(err)
		}
		lsDone := make(chan error, 1)
		go func() { lsDone <- ls.Wait() }()
		done := make(chan error, 1)
		go func() { <-m.done; done <- m.err }()
		before, err := cpuOf(m.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		cpu, wall := signalBusy(t, m.cmd, done, before+150*time.Millisecond, syscall.SIGTERM)
		t.Logf("tree mount: stopped after %v of processor time, %v", cpu, wall)
		if m.cmd.ProcessState.ExitCode() != 0 || mountedAt(mnt) != "" {
			t.Fatalf("tree mount: exit %d, mounted %q, stderr %q", m.cmd.ProcessState.ExitCode(), mountedAt(mnt), m.stderr)
		}
		if cpu > interruptCPU {
			t.Errorf("tree mount went on for %v of processor time after SIGTERM", cpu)
		}
		select {
		case err := <-lsDone:
			if err == nil {
				t.Errorf("ls of the file whose index was interrupted succeeded")
			}
		case <-time.After(exitTimeout):
			_ = ls.Process.Kill()
			t.Fatal("ls still waits after the mount ended")
		}
	})
}
