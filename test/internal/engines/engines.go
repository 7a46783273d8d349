// Package engines runs the real systems whose write-ahead logs recfs reads,
// for the nested module's tests: Debian's prometheus and etcd (with
// etcdctl), each on loopback ports in a scratch directory, stopped by pid
// when the test ends. .ci/run installs them; a test skips, saying so, where
// they are not installed.
package engines

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// need returns the path of tool, or skips t saying how it gets installed.
func need(t testing.TB, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s is not installed (.ci/run installs Debian's %s)", tool, pkg)
	}
	return p
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a server process started by a test.
type proc struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	once sync.Once
	err  error
}

// start runs the command in the background, its output kept for failure
// messages; it is stopped when t ends.
func start(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), log: &bytes.Buffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { p.stop() })
	return p
}

// stop ends the process by its pid (SIGTERM, then SIGKILL after 10 s) and
// waits for it.
func (p *proc) stop() error {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case p.err = <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			p.err = <-done
		}
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
				p.err = nil // the end we asked for
			}
		}
	})
	return p.err
}

// waitFor polls ok every 100 ms until it reports true, failing t after
// timeout with the process's output.
func (p *proc) waitFor(t testing.TB, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v; output:\n%s", what, timeout, p.log.String())
		}
		if p.cmd.ProcessState != nil {
			t.Fatalf("%s: the server ended; output:\n%s", what, p.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CopyDir copies the regular files and directories under src into a new
// temporary directory and returns it, so that a test can damage a copy.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(to, 0o755)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Files returns the regular files of dir whose names satisfy keep, sorted.
func Files(t testing.TB, dir string, keep func(name string) bool) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && keep(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
