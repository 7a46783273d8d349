package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// The background process indexes the source before it listens: the
	// paced file holds it there, a quarter of the way in.
	orphanDaemon(t, c, p, p.path, logPath, func() string { return addr + ": " + listening(addr) })
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
	b, _ := os.ReadFile(logPath)
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
