package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/test/internal/engines"
)

// grepR runs grep -r pattern over dir and returns its matching lines.
func grepR(t *testing.T, pattern, dir string) []string {
	t.Helper()
	r := runCmd(t, "grep", "-rE", pattern, dir)
	if r.code > 1 {
		t.Fatalf("grep -r %s %s: exit %d: %s", pattern, dir, r.code, r.stderr)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// waitLines polls grep -r until it finds more than n lines, failing after
// timeout; it returns what it found.
func waitLines(t *testing.T, pattern, dir string, n int, timeout time.Duration) []string {
	t.Helper()
	var lines []string
	waitFor(t, timeout, 100*time.Millisecond, func() (bool, string) {
		lines = grepR(t, pattern, dir)
		return len(lines) > n, fmt.Sprintf("grep -r %s %s: %d lines, want more than %d", pattern, dir, len(lines), n)
	})
	return lines
}

// TestPrometheusLiveMount: the wal/ directory of a running Prometheus
// (scraping itself every second) mounts with --follow --decode prometheus
// on both backends; grep -r for a metric finds its series and its samples
// with the series' labels, and new samples appear while it runs. A
// segment refuses --rw writes and recfs append, saying why, and stays as
// it was.
func TestPrometheusLiveMount(t *testing.T) {
	needFUSE(t)
	p := engines.StartPrometheus(t, engines.PromOptions{Compress: true})
	wal := filepath.Join(p.Dir, "wal")
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, wal, mnt, "--backend", backend, "--follow", "--follow-interval", "200ms", "--decode", "prometheus")
		up := `^sample [0-9]+ [0-9TZ:.-]+ 1 up\{instance="` + regexp.QuoteMeta(p.Addr) + `", job="self"\}$`
		first := waitLines(t, up, mnt, 0, 30*time.Second)
		series := grepR(t, `^series [0-9]+ up\{instance=`, mnt)
		if len(series) != 1 {
			t.Fatalf("series lines of up: %q", series)
		}
		// Prometheus scrapes every second: within a few follow
		// intervals more samples of up are there.
		waitLines(t, up, mnt, len(first), 15*time.Second)
		info, err := os.ReadFile(filepath.Join(mnt, "00000000", ".recfs"))
		if err != nil || !strings.Contains(string(info), "prometheus-wal") {
			t.Fatalf(".recfs of the live segment: %q, %v", info, err)
		}
	})
	seg := filepath.Join(t.TempDir(), "00000000")
	b, err := os.ReadFile(filepath.Join(wal, "00000000"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(seg, b, 0o644)
	if r := runRecfs(t, "append", seg, "/dev/null"); r.code == 0 || !strings.Contains(r.stderr, "Prometheus") {
		t.Fatalf("append to a segment: exit %d, %q", r.code, r.stderr)
	}
	mnt := newMountDir(t)
	m := startMount(t, seg, mnt, "--rw")
	if err := os.WriteFile(filepath.Join(mnt, "new"), []byte("x"), 0o644); err == nil {
		t.Fatal("a record written into a segment through --rw")
	}
	if !m.logSays("Prometheus", 10*time.Second) {
		t.Fatalf("the refusal does not say why: %s", m.stderr)
	}
	if after, _ := os.ReadFile(seg); string(after) != string(b) {
		t.Fatal("the segment changed")
	}
}

// TestEtcdMount: the member/wal directory of an etcd that served puts,
// deletes, a txn, leases, auth changes and a compaction mounts with
// --decode etcd on both backends; grep -r for a key finds every write to
// it with its raft index, the same lines recfs cat --decode etcd prints.
func TestEtcdMount(t *testing.T) {
	needFUSE(t)
	e := engines.StartEtcd(t)
	e.Ctl(t, "", "put", "/registry/secrets/default/db-password", "hunter2")
	e.Ctl(t, "", "put", "/registry/secrets/default/db-password", "correct horse")
	e.Ctl(t, "", "put", "/registry/configmaps/default/other", "x")
	e.Ctl(t, "", "del", "/registry/secrets/default/db-password")
	e.Ctl(t, "value(\"/registry/configmaps/default/other\") = \"x\"\n\nput /registry/secrets/default/from-txn yes\n\n\n", "txn")
	e.Stop(t)
	var want []string
	files, _ := filepath.Glob(filepath.Join(e.WALDir(), "*.wal"))
	for _, f := range files {
		r := runRecfs(t, "cat", "--decode", "etcd", f)
		if r.code != 0 {
			t.Fatalf("cat: %d %s", r.code, r.stderr)
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.Contains(l, "/registry/secrets/default") {
				want = append(want, l)
			}
		}
	}
	if len(want) != 4 {
		t.Fatalf("cat --decode etcd: %d lines of the secrets, want 4 (3 writes, 1 txn put): %q", len(want), want)
	}
	for _, l := range want {
		if !regexp.MustCompile(`^entry term=[0-9]+ index=[0-9]+ type=normal (txn success )?(put|delete-range) /registry/secrets/default/`).MatchString(l) {
			t.Fatalf("line %q", l)
		}
	}
	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, e.WALDir(), mnt, "--backend", backend, "--decode", "auto")
		got := grepR(t, "/registry/secrets/default", mnt)
		if len(got) != len(want) {
			t.Fatalf("grep -r: %q, want %q", got, want)
		}
		for i, l := range got {
			if _, line, _ := strings.Cut(l, ":"); line != want[i] {
				t.Fatalf("grep -r line %d: %q, want %q", i, line, want[i])
			}
		}
	})
}
