package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/leveldb"
)

// TestDaemonErrors: mount --daemon exits non-zero with the real reason
// when the source is missing, the mountpoint is busy, the source is not a
// record file (found by the background process), and when fusermount3
// refuses the mount (an unprivileged --allow-other without
// user_allow_other): its own words reach the user, not only "fusermount
// exited with code 256".
func TestDaemonErrors(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "ev.log")
	writeLog(t, src, genRecords(45, 3, 30))
	notLog := filepath.Join(dir, "plain.log")
	if err := os.WriteFile(notLog, []byte("just some words, not a log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := newMountDir(t)
	busy := newMountDir(t)
	startMount(t, src, busy, "--no-cache")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing source", []string{filepath.Join(dir, "missing.log"), mnt}, "no such file"},
		{"busy mountpoint", []string{src, busy}, "is busy"},
		{"not a record file", []string{"--no-cache", notLog, mnt}, "not a record file"},
	} {
		r := runRecfs(t, append([]string{"mount", "--daemon", "--log-file", "-"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want non-zero and %q", tc.name, r.code, r.stderr, tc.want)
		}
		if mountedAt(mnt) != "" {
			t.Fatalf("%s: something is mounted at %s", tc.name, mnt)
		}
	}
	// The same under --json: one JSON object on standard error.
	r := runRecfs(t, "mount", "--json", "--daemon", src, busy)
	var je struct {
		Error string
		Exit  int
	}
	if err := json.Unmarshal([]byte(r.stderr), &je); err != nil || r.code == 0 || je.Exit != r.code || !strings.Contains(je.Error, "is busy") {
		t.Errorf("--json busy mountpoint: exit %d, stderr %q (%v)", r.code, r.stderr, err)
	}

	// fusermount3's refusal, as the unprivileged user.
	needAttacker(t)
	pub := publicDir(t)
	psrc := filepath.Join(pub, "ev.log")
	writeLog(t, psrc, genRecords(46, 3, 30))
	if err := os.Chmod(psrc, 0o644); err != nil {
		t.Fatal(err)
	}
	pmnt := newPublicMountDir(t, pub)
	uid, gid := needAttacker(t)
	if err := os.Chown(pmnt, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("/etc/fuse.conf"); strings.Contains(stripComments(string(b)), "user_allow_other") {
		t.Skip("/etc/fuse.conf allows allow_other to every user")
	}
	// The binary, where the unprivileged user may run it.
	pbin := filepath.Join(pub, "recfs")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pbin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ar := asAttacker(t, pbin, "mount", "--daemon", "--no-cache", "--log-file", "-", "--allow-other", psrc, pmnt)
	if mountedAt(pmnt) != "" {
		_ = syscall.Unmount(pmnt, syscall.MNT_DETACH)
		t.Fatalf("an unprivileged --allow-other mount succeeded")
	}
	// fusermount3 says why (user_allow_other, or no access to /dev/fuse
	// where the machine denies that): its own line reaches the user.
	if ar.code == 0 || !regexp.MustCompile(`(?m)^(\S*/)?fusermount3: .*(user_allow_other|/dev/fuse)`).MatchString(ar.stderr) {
		t.Errorf("unprivileged --allow-other: exit %d, stderr %q; want fusermount3's reason", ar.code, ar.stderr)
	}
}

// stripComments drops # comments from a configuration file.
func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestDaemonJSONAndLog: mount --daemon --json prints the daemon's pid (a
// live recfs process), the default log file under $XDG_STATE_HOME gets
// the daemon's lines, and unmount --json reports the unmount.
func TestDaemonJSONAndLog(t *testing.T) {
	needFUSE(t)
	src := filepath.Join(t.TempDir(), "ev.log")
	writeLog(t, src, genRecords(47, 3, 30))
	mnt := newMountDir(t)
	state := t.TempDir()
	c := exec.Command(bin, "mount", "--daemon", "--json", "--no-cache", src, mnt)
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	r := runPrepared(t, c)
	t.Cleanup(func() {
		if mountedAt(mnt) != "" {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	if r.code != 0 {
		t.Fatalf("mount --daemon --json: %d %s", r.code, r.stderr)
	}
	var out struct {
		Status, Source, Mountpoint, Log string
		Pid                             int
		Daemon                          bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	wantLog := filepath.Join(state, "recfs", "daemon.log")
	if out.Status != "ready" || !out.Daemon || out.Mountpoint != mnt || out.Log != wantLog {
		t.Errorf("mount --json: %+v; want ready, daemon, %s, log %s", out, mnt, wantLog)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", out.Pid))
	if err != nil || filepath.Base(exe) != "recfs" {
		t.Errorf("pid %d is not a live recfs: %q %v", out.Pid, exe, err)
	}
	u := runRecfs(t, "unmount", "--json", mnt)
	var uo struct{ Status, Mountpoint string }
	if err := json.Unmarshal([]byte(u.stdout), &uo); u.code != 0 || err != nil || uo.Status != "unmounted" || uo.Mountpoint != mnt {
		t.Errorf("unmount --json: %d %q %q (%v)", u.code, u.stdout, u.stderr, err)
	}
	deadline := time.Now().Add(exitTimeout)
	for syscall.Kill(out.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logText, err := os.ReadFile(wantLog)
	if err != nil {
		t.Fatal(err)
	}
	// Written before the verdict (through the parent) and after it (by
	// the daemon alone).
	for _, w := range []string{"daemon ready", "msg=unmounted"} {
		if !strings.Contains(string(logText), w) {
			t.Errorf("log %s lacks %q:\n%s", wantLog, w, logText)
		}
	}
}

// writeSlowLog writes a log of 6M tiny records (130 MiB), which takes a
// few seconds to index on this machine.
func writeSlowLog(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "big.log")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := leveldb.NewWriter(bw, leveldb.WriterOptions{})
	rec := []byte("0123456789abcdef")
	for i := 0; i < 6_000_000; i++ {
		if _, err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestDaemonInterrupted: SIGINT to mount --daemon while the background
// process indexes ends both: exit status non-zero, "interrupted" said,
// nothing mounted, no server left.
func TestDaemonInterrupted(t *testing.T) {
	needFUSE(t)
	src := writeSlowLog(t)
	mnt := newMountDir(t)
	t.Cleanup(func() {
		if mountedAt(mnt) != "" {
			runRecfs(t, "unmount", mnt)
		}
	})
	c := exec.Command(bin, "mount", "--daemon", "--no-cache", "--log-file", "-", src, mnt)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt as soon as the background process runs (it then indexes
	// for a while): a fixed sleep raced the indexing on an idle machine.
	deadline := time.Now().Add(mountTimeout)
	for !childServes(c.Process.Pid, mnt) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("interrupted mount --daemon: %v, stderr %q", err, stderr.String())
	}
	if m := mountedAt(mnt); m != "" {
		t.Errorf("%s mounted at %s after the interrupted start", m, mnt)
	}
	// No process serves or indexes for this mountpoint any more.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), mnt) {
			t.Errorf("%s still runs: %q", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// TestDaemonProgress runs mount --daemon on a pseudo-terminal (script(1))
// over a log large enough to index for a while: the parent draws the
// indexing progress the daemon reports, then prints the ready line.
func TestDaemonProgress(t *testing.T) {
	needFUSE(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1)")
	}
	src := writeSlowLog(t)
	mnt := newMountDir(t)
	t.Cleanup(func() {
		if mountedAt(mnt) != "" {
			runRecfs(t, "unmount", mnt)
		}
	})
	start := time.Now()
	r := runCmd(t, "script", "-qfc", fmt.Sprintf("%s mount --daemon --no-cache --log-file - %s %s", bin, src, mnt), "/dev/null")
	took := time.Since(start)
	if r.code != 0 || !strings.Contains(r.stdout, "ready: ") {
		t.Fatalf("script: %d\n%q\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "indexing ") || !strings.Contains(r.stdout, "%") {
		t.Errorf("no progress on the terminal (mount took %v):\n%q", took, r.stdout)
	}
}

// TestNotifySystemd: a foreground mount under a service manager that set
// $NOTIFY_SOCKET (systemd Type=notify) sends READY=1 with its pid once the
// mount answers, and not before.
func TestNotifySystemd(t *testing.T) {
	needFUSE(t)
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	src := filepath.Join(t.TempDir(), "ev.log")
	recs := genRecords(49, 3, 20)
	writeLog(t, src, recs)
	mnt := newMountDir(t)
	m := launchMount(t, src, mnt, "--no-cache")
	if err := conn.SetReadDeadline(time.Now().Add(mountTimeout)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v\n%s", err, m.stderr)
	}
	msg := string(buf[:n])
	// Ready means ready: the mount answers now.
	if b, err := os.ReadFile(filepath.Join(mnt, "000001")); err != nil || string(b) != string(recs[1]) {
		t.Errorf("READY=1 sent before the mount answered: %v", err)
	}
	if !strings.Contains(msg, "READY=1\n") || !strings.Contains(msg, fmt.Sprintf("MAINPID=%d\n", m.cmd.Process.Pid)) {
		t.Errorf("notification %q: want READY=1 and MAINPID=%d", msg, m.cmd.Process.Pid)
	}
}

// childServes reports whether a process other than parent has mnt in its
// command line (the daemon's background process).
func childServes(parent int, mnt string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if p == fmt.Sprintf("/proc/%d/cmdline", parent) {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), mnt) {
			return true
		}
	}
	return false
}
