package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// envTestChild makes the test binary a daemon child (see TestMain): "fds"
// reports ready with the targets of its open descriptors as its info
// line; "fail" prints a line on standard error and fails with exit
// status 3.
const envTestChild = "DAEMON_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(envTestChild) {
	case "":
		os.Exit(m.Run())
	case "fds":
		c := OpenChild(nil)
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			c.Fail(err)
			os.Exit(1)
		}
		var held []string
		for _, e := range ents {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
				held = append(held, e.Name()+"="+target)
			}
		}
		c.Serving(strings.Join(held, " "))
	case "fail":
		c := OpenChild(nil)
		fmt.Fprintln(os.Stderr, "fusermount3: mount failed: Operation not permitted")
		fmt.Fprintln(os.Stderr, `time="2026-01-01T00:00:00Z" level=error msg="a log record"`)
		c.Fail(errors.New("mount failed:\nsee above"))
		os.Exit(3)
	}
	os.Exit(0)
}

// spawnTestChild spawns the test binary as a daemon child in mode, its
// output to a log file in a test directory.
func spawnTestChild(t *testing.T, mode string) (*Started, error) {
	t.Setenv(envTestChild, mode)
	path := filepath.Join(t.TempDir(), "daemon.log")
	logf, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	return Spawn(context.Background(), Options{Log: logf, LogName: path})
}

// TestSpawnInheritsNoStrayFD: a daemon child holds no descriptor of its
// parent's but its standard streams and its pipes, even one the parent
// inherited without close-on-exec (review finding F5: `recfs mount
// --daemon 5</dev/zero` kept fd 5 for the daemon's life, and a caller
// waiting for EOF on an inherited pipe, such as a CI runner or a make
// jobserver, waited for the daemon).
func TestSpawnInheritsNoStrayFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// As a shell's 5>pipe would: a descriptor that exec passes on.
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	stray, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	started, err := spawnTestChild(t, "fds")
	if err != nil {
		t.Fatal(err)
	}
	held := strings.Fields(started.Info)
	if len(held) < 3 || !strings.Contains(started.Info, "3=pipe:[") {
		t.Fatalf("the child's descriptors %q: want its streams and status pipe at least", held)
	}
	for _, h := range held {
		if strings.HasSuffix(h, "="+stray) {
			t.Errorf("the daemon child holds the parent's inherited %s as %s (all: %q)", stray, h, held)
		}
	}
	// The parent's own flag is as it was: only the child went without.
	if fl, err := unix.FcntlInt(w.Fd(), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC != 0 {
		t.Errorf("the parent's descriptor flags %#x, %v after Spawn; want close-on-exec unset", fl, err)
	}
}

// TestSpawnFailure: a child that fails gives its message, its exit
// status and what it printed on standard error that is no log record.
func TestSpawnFailure(t *testing.T) {
	started, err := spawnTestChild(t, "fail")
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Spawn: %v, %v; want a *StartError", started, err)
	}
	if se.Message != "mount failed: see above" || se.Code != 3 || se.Interrupted || se.Ready || se.Err == nil {
		t.Errorf("StartError %+v", se)
	}
	if got, want := se.Explanation(se.Message), "fusermount3: mount failed: Operation not permitted"; got != want {
		t.Errorf("Explanation %q, want %q", got, want)
	}
	if got := se.Explanation(se.Message, "fusermount3: "); got != "" {
		t.Errorf("Explanation skipping fusermount3's lines: %q", got)
	}
}
