package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/test/internal/syncbuf"
)

// vectors is the shared reference-vector folder, relative to test/e2e.
const vectors = "../../../shared/vectors"

// Bounds on everything that waits.
const (
	mountTimeout = 30 * time.Second // until a mount shows up
	exitTimeout  = 10 * time.Second // until a signalled mount process exits
)

// procTimeout bounds the lifetime of any subprocess (the large-directory
// test raises it).
var procTimeout = 3 * time.Minute

// bin is the recfs binary TestMain builds.
var bin string

// fullBin is the full link beside bin: commands that need S3 or --proto
// reach it through bin's hand-off, as a user's do.
var fullBin string

// buildErr is set when the binaries could not be built.
var buildErr error

// buildBoth builds the two links of recfs as the Makefile does: lean (tag
// recfs_lean, static: CGO_ENABLED=0) as bin, full as fullBin beside it.
func buildBoth(bin, fullBin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	for _, b := range []struct{ out, tags, cgo string }{{bin, "recfs_lean", "0"}, {fullBin, "", ""}} {
		build := exec.CommandContext(ctx, "go", "build", "-tags", b.tags, "-o", b.out, "github.com/recfs/recfs/cmd/recfs")
		build.Dir = "../.."
		if b.cgo != "" {
			build.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		}
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build -tags %q: %v\n%s", b.tags, err, out)
		}
	}
	return nil
}

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "recfs-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(tmp, "recfs")
	fullBin = filepath.Join(tmp, "recfs-full")
	buildErr = buildBoth(bin, fullBin)
	// Saved indexes go to a scratch cache, never the user's. (Set after the
	// build: GOCACHE defaults to a folder of XDG_CACHE_HOME.)
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	// Daemon logs go to a scratch state directory too.
	os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	code := m.Run()
	// No recfs mount of ours may survive the suite.
	mine := map[string]bool{}
	mountDirs.Range(func(k, _ any) bool { mine[k.(string)] = true; return true })
	for _, mp := range recfsMounts() {
		if mine[mp] {
			fmt.Fprintf(os.Stderr, "e2e: stale recfs mount %s left behind; detaching\n", mp)
			_ = syscall.Unmount(mp, syscall.MNT_DETACH)
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// needBinary fails the test when TestMain could not build recfs.
// needFUSE calls it; tests that run the CLI only call it themselves.
func needBinary(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// needFUSE applies RECFS_TEST_FUSE: "" runs when /dev/fuse exists (skips
// otherwise), "0" skips, "1" requires it (a missing /dev/fuse fails).
func needFUSE(t *testing.T) {
	t.Helper()
	needBinary(t)
	mode := os.Getenv("RECFS_TEST_FUSE")
	if mode == "0" {
		t.Skip("RECFS_TEST_FUSE=0: FUSE mount tests disabled")
	}
	_, err := os.Stat("/dev/fuse")
	if err == nil && os.Geteuid() != 0 {
		if _, lerr := exec.LookPath("fusermount3"); lerr != nil {
			err = fmt.Errorf("not root and no fusermount3: %v", lerr)
		}
	}
	if err != nil {
		if mode == "1" {
			t.Fatalf("RECFS_TEST_FUSE=1 but FUSE is unusable: %v", err)
		}
		t.Skipf("FUSE unusable (set RECFS_TEST_FUSE=1 to make this a failure): %v", err)
	}
}

// dirNames returns the names in dir, sorted (as os.ReadDir gives them).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

// startWatched starts c with its standard error captured; done receives
// what c.Wait returns, once, when c has ended.
func startWatched(t *testing.T, c *exec.Cmd) (stderr *syncbuf.Buffer, done chan error) {
	t.Helper()
	stderr = &syncbuf.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() { done <- c.Wait() }()
	return stderr, done
}

// waitFor polls cond every period until it holds, and fails t with what
// cond last said once limit has passed.
func waitFor(t *testing.T, limit, period time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", limit, state)
		}
		time.Sleep(period)
	}
}

// eachBackend runs check as a subtest per FUSE backend, named for it,
// skipping a backend this machine cannot mount with (needBackend).
func eachBackend(t *testing.T, check func(t *testing.T, backend string)) {
	t.Helper()
	for _, backend := range []string{"gofuse", "bazil"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			check(t, backend)
		})
	}
}

// needBackend applies RECFS_TEST_FUSE to what a backend needs beyond
// /dev/fuse: bazil always mounts through fusermount3.
func needBackend(t *testing.T, backend string) {
	t.Helper()
	if backend != "bazil" {
		return
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if os.Getenv("RECFS_TEST_FUSE") == "1" {
			t.Fatalf("RECFS_TEST_FUSE=1 but the bazil backend needs fusermount3: %v", err)
		}
		t.Skipf("the bazil backend needs fusermount3: %v", err)
	}
}

// mountEntry is what the tests need of a mountinfo line.
type mountEntry struct{ point, fstype string }

// readMountinfo parses /proc/self/mountinfo (mount point is field 5, the
// file system type follows the " - " separator).
func readMountinfo() []mountEntry {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []mountEntry
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		for i := 6; i+1 < len(f); i++ {
			if f[i] == "-" {
				out = append(out, mountEntry{point: strings.ReplaceAll(f[4], `\040`, " "), fstype: f[i+1]})
				break
			}
		}
	}
	return out
}

// mountedAt returns the type of the topmost mount at dir ("" if none).
func mountedAt(dir string) string {
	t := ""
	for _, m := range readMountinfo() {
		if m.point == dir {
			t = m.fstype
		}
	}
	return t
}

// recfsMounts lists the mount points of every recfs mount.
func recfsMounts() []string {
	var out []string
	for _, m := range readMountinfo() {
		if m.fstype == "fuse.recfs" {
			out = append(out, m.point)
		}
	}
	return out
}

// mount is a running `recfs mount` subprocess.
type mount struct {
	dir            string
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	done           chan struct{} // closed when the process has exited
	err            error         // its Wait result, valid after done
}

// logSays waits up to d for the mount's stderr to hold s: the process
// logs before it answers the kernel, but the test reads its stderr
// through a pipe, so a line can arrive after the answer.
func (m *mount) logSays(s string, d time.Duration) bool {
	for deadline := time.Now().Add(d); !strings.Contains(m.stderr.String(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// mountDirs holds every mount point the suite made, so TestMain can check
// that none is left mounted (and touch no one else's mounts).
var mountDirs sync.Map

// newMountDir returns an empty directory to mount on.
func newMountDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	mountDirs.Store(d, true)
	return d
}

// detachAtCleanup makes the end of the test detach (lazily) whatever is
// still mounted on mnt: a daemon's mount the test did not end, or a stale
// mount its killed server left.
func detachAtCleanup(t *testing.T, mnt string) {
	t.Cleanup(func() { detachIfMounted(mnt) })
}

// detachIfMounted detaches (lazily) whatever is mounted on mnt.
func detachIfMounted(mnt string) {
	if mountedAt(mnt) != "" {
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
	}
}

// startMount runs `recfs mount [args...] src dir` and waits, with a bound,
// until dir is a recfs mount in mountinfo. Cleanup unmounts it.
func startMount(t *testing.T, src, dir string, args ...string) *mount {
	t.Helper()
	return startMountEnv(t, nil, src, dir, args...)
}

// startMountEnv is startMount of a process with env added to the
// environment.
func startMountEnv(t *testing.T, env []string, src, dir string, args ...string) *mount {
	t.Helper()
	m := launchMountEnv(t, env, src, dir, args...)
	deadline := time.Now().Add(mountTimeout)
	for mountedAt(dir) != "fuse.recfs" {
		select {
		case <-m.done:
			t.Fatalf("recfs mount exited before the mount was ready: %v\nstderr:\n%s", m.err, m.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mount at %s not ready after %v\nstderr:\n%s", dir, mountTimeout, m.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return m
}

// launchMount starts the process without waiting for the mount.
func launchMount(t *testing.T, src, dir string, args ...string) *mount {
	t.Helper()
	return launchMountEnv(t, nil, src, dir, args...)
}

// launchMountEnv is launchMount with env added to the environment.
func launchMountEnv(t *testing.T, env []string, src, dir string, args ...string) *mount {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	m := &mount{dir: dir, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	m.cmd = exec.CommandContext(ctx, bin, append(append([]string{"mount"}, args...), src, dir)...)
	if env != nil {
		m.cmd.Env = append(os.Environ(), env...)
	}
	m.cmd.Stdout, m.cmd.Stderr = m.stdout, m.stderr
	m.cmd.WaitDelay = 5 * time.Second
	if err := m.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		m.err = m.cmd.Wait()
		cancel()
		close(m.done)
	}()
	t.Cleanup(func() { m.cleanup(t) })
	return m
}

// cleanup unmounts (recfs unmount, then a lazy detach as the last resort)
// and makes sure the process is gone.
func (m *mount) cleanup(t *testing.T) {
	if mountedAt(m.dir) == "fuse.recfs" {
		if r := runRecfs(t, "unmount", m.dir); r.code != 0 {
			t.Logf("cleanup: recfs unmount %s: %d %s", m.dir, r.code, r.stderr)
			_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
		}
	}
	select {
	case <-m.done:
	case <-time.After(exitTimeout):
		// Ask for a goroutine dump (SIGQUIT) before killing it.
		_ = m.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-m.done:
		case <-time.After(2 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
		t.Errorf("recfs mount of %s still running %v after unmount; its stderr:\n%.20000s", m.dir, exitTimeout, m.stderr)
	}
	if mountedAt(m.dir) == "fuse.recfs" {
		_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
	}
}

// wait waits, with a bound, for the mount process to exit and returns its
// exit status.
func (m *mount) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-m.done:
	case <-time.After(exitTimeout):
		t.Fatalf("recfs mount did not exit within %v\nstderr:\n%s", exitTimeout, m.stderr)
	}
	var ee *exec.ExitError
	if errors.As(m.err, &ee) {
		return ee.ExitCode()
	}
	if m.err != nil {
		t.Fatalf("wait: %v", m.err)
	}
	return 0
}

// result of a short recfs or shell command.
type result struct {
	code           int
	stdout, stderr string
}

// runRecfs runs the binary with args and a timeout.
func runRecfs(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, bin, args...)
}

// runCmd runs any command with a timeout and returns its output.
func runCmd(t *testing.T, name string, args ...string) result {
	t.Helper()
	return runPrepared(t, exec.Command(name, args...))
}

// runPrepared runs c with a timeout (procTimeout, then SIGKILL) and returns
// its output.
func runPrepared(t *testing.T, c *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.WaitDelay = 5 * time.Second
	// No c.Cancel: exec refuses one on a command made without a context;
	// the timer below is the timeout.
	timer := time.AfterFunc(procTimeout, func() {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	})
	defer timer.Stop()
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", c.Path, c.Args, err)
	}
	return result{code, out.String(), errb.String()}
}

// infoLines returns the "key: value" lines of a .recfs file.
func infoLines(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if ok {
			out[k] = append(out[k], v)
		}
	}
	return out
}
