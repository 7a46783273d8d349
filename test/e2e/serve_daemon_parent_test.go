package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeDaemonParentKilled: serve --daemon killed (SIGKILL: no chance
// to tell its background process) while that process still indexes its
// source, before it listens and reports, leaves nothing behind: the
// background process finds its parent gone, stops as an interrupted
// start and exits; the address it was told to listen on stays free; no
// process of the command is left; its log says why it stopped. (The
// mount twin is TestDaemonParentKilled.)
func TestServeDaemonParentKilled(t *testing.T) {
	needFUSE(t)
	p := servePaced(t, "big.log", progressLog(t))
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	c := exec.Command(bin, "serve", "http", "--daemon", "--no-cache", "--log-file", logPath, "--addr", addr, p.path)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The background process indexes the source before it listens: the
	// paced file holds it there, a quarter of the way in.
	p.stepUntil(t, p.size/4)
	child := daemonChild(c.Process.Pid, p.path)
	if child == 0 {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("the file is read, but not by a background process")
	}
	t.Cleanup(func() {
		// On failure: end the background process.
		if processAlive(child) {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	})
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	// The source answers again: the build goes on, or sees the stop.
	p.open()
	for deadline := time.Now().Add(exitTimeout); processAlive(child); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("the background process %d still runs %v after its parent was killed (%s: %s); log:\n%s",
				child, exitTimeout, addr, listening(addr), b)
		}
	}
	// Its port is closed (or was never opened): nothing answers there,
	// and the address can be listened on again.
	if l := listening(addr); l != "nothing listens" {
		t.Errorf("after the background process exited, %s: %s", addr, l)
	}
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("the background process of a killed serve --daemon left %s taken: %v", addr, err)
	} else {
		l.Close()
	}
	if left := daemonChild(c.Process.Pid, p.path); left != 0 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", left))
		t.Errorf("process %d (%q) still runs for the source of a killed serve --daemon", left, b)
	}
	// It said why it stopped, in its log (its standard error was the
	// dead parent's).
	b, _ := os.ReadFile(logPath)
	if !strings.Contains(string(b), "parent died before the daemon was ready") {
		t.Errorf("the background process's log does not say its parent died; log:\n%s", b)
	}
	if strings.Contains(string(b), "msg=serving") {
		t.Errorf("the background process of a killed serve --daemon served; log:\n%s", b)
	}
}

// freeAddr returns a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// listening says whether something accepts connections at addr.
func listening(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "nothing listens"
	}
	c.Close()
	return "something listens"
}
