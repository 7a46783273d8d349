package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeDaemon: `recfs serve PROTO --daemon --json` returns once a
// background process serves, printing its URL, pid and log; the records
// read through it are recfs cat's; its log gets the server's lines; SIGTERM
// to its pid stops it, and the log says so. A daemon that cannot serve
// (its port taken) fails in the parent with the reason.
func TestServeDaemon(t *testing.T) {
	need(t, "curl", "curl")
	needBinary(t)
	t.Parallel()
	dir, _, recs := serveFixture(t, 30)
	for _, proto := range []string{"http", "webdav"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "serve.log")
			r := runRecfs(t, "serve", proto, "--daemon", "--json", "--log-file", log, dir)
			var st struct {
				Status, Protocol, URL, Addr, Log string
				PID                              int
				Daemon                           bool
			}
			if r.code != 0 || json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &st) != nil {
				t.Fatalf("serve --daemon: %d %q %s", r.code, r.stdout, r.stderr)
			}
			if st.PID <= 0 || st.PID == os.Getpid() {
				t.Fatalf("serve --daemon printed pid %d: %q", st.PID, r.stdout)
			}
			stopped := false
			t.Cleanup(func() {
				if !stopped {
					_ = syscall.Kill(st.PID, syscall.SIGKILL)
				}
			})
			if st.Status != "serving" || st.Protocol != proto || !st.Daemon || st.Log != log || !strings.HasPrefix(st.URL, "http://127.0.0.1:") {
				t.Fatalf("serve --daemon line: %+v", st)
			}
			for _, n := range []int{0, 29} {
				if c := curl(t, fmt.Sprintf("%sevents.log/%06d", st.URL, n)); c.code != 0 || c.stdout != string(recs[n]) {
					t.Fatalf("curl record %d from the daemon: %d, %d bytes: %s", n, c.code, len(c.stdout), c.stderr)
				}
			}
			if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(exitTimeout)
			for processAlive(st.PID) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if processAlive(st.PID) {
				t.Fatalf("the daemon (pid %d) still runs %v after SIGTERM", st.PID, exitTimeout)
			}
			stopped = true
			b, err := os.ReadFile(log)
			if err != nil || !strings.Contains(string(b), "msg=serving") || !strings.Contains(string(b), "msg=stopped") {
				t.Fatalf("daemon log %s: %v\n%s", log, err, b)
			}
			if c := curl(t, st.URL); c.code == 0 {
				t.Fatalf("the daemon still answers after SIGTERM")
			}
		})
	}
	t.Run("port taken", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, "http", dir)
		r := runRecfs(t, "serve", "http", "--daemon", "--log-file", "-", "--addr", s.addr, dir)
		if r.code == 0 || !strings.Contains(r.stderr, "address already in use") {
			t.Fatalf("serve --daemon on a taken port: %d %q %q", r.code, r.stdout, r.stderr)
		}
	})
}

// processAlive reports whether pid runs (a zombie counts as gone).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return err == nil
}
