package engines

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Etcd is a running single-member etcd cluster on loopback ports, its data
// in Dir (the WAL in Dir/member/wal).
type Etcd struct {
	Dir      string
	Endpoint string // host:port of its client URL
	ctl      string
	p        *proc
}

// StartEtcd starts Debian's etcd and waits until etcdctl reaches it. It is
// stopped when t ends; Stop stops it earlier.
func StartEtcd(t testing.TB) *Etcd {
	t.Helper()
	bin := need(t, "etcd", "etcd-server")
	ctl := need(t, "etcdctl", "etcd-client")
	dir := filepath.Join(t.TempDir(), "etcd")
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	p := start(t, bin, "--name", "recfs", "--data-dir", dir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "recfs="+peer, "--listen-metrics-urls", "",
		"--snapshot-count", "1000000")
	e := &Etcd{Dir: dir, Endpoint: strings.TrimPrefix(client, "http://"), ctl: ctl, p: p}
	p.waitFor(t, "etcd ready", 60*time.Second, func() bool {
		_, err := e.run("", "endpoint", "health")
		return err == nil
	})
	return e
}

// run runs etcdctl with args (and stdin) against the server.
func (e *Etcd) run(stdin string, args ...string) (string, error) {
	cmd := exec.Command(e.ctl, append([]string{"--endpoints", e.Endpoint, "--dial-timeout", "5s", "--command-timeout", "10s"}, args...)...)
	cmd.Env = append(cmd.Environ(), "ETCDCTL_API=3")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("etcdctl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// Ctl runs etcdctl with args (stdin for txn) and returns its output,
// failing t if it fails.
func (e *Etcd) Ctl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := e.run(stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Stop stops the server (SIGTERM, by pid) and waits for it.
func (e *Etcd) Stop(t testing.TB) {
	t.Helper()
	if err := e.p.stop(); err != nil {
		t.Logf("etcd ended with %v", err)
	}
}

// WALDir returns the directory of its WAL files.
func (e *Etcd) WALDir() string { return filepath.Join(e.Dir, "member", "wal") }
