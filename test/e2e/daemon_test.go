package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/test/internal/syncbuf"
	"github.com/recfs/recfs/test/internal/vgw"
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
	recfile.WriteLog(t, src, genRecords(45, 3, 30))
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
	recfile.WriteLog(t, psrc, genRecords(46, 3, 30))
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
	pbin := publicBin(t, pub)
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

// daemonLogCap is recfs's cap on a daemon's log file (10 MiB).
const daemonLogCap = 10 << 20

// TestDaemonJSONAndLog: mount --daemon --json prints the daemon's pid (a
// live recfs process); with no system log listening, the default log file
// under $XDG_STATE_HOME gets the daemon's lines (after moving a full one
// to daemon.log.1); unmount --json reports the unmount.
func TestDaemonJSONAndLog(t *testing.T) {
	needFUSE(t)
	src := tempLog(t, "ev.log", genRecords(47, 3, 30))
	mnt := newMountDir(t)
	state := t.TempDir()
	// A full log from earlier daemons.
	if err := os.MkdirAll(filepath.Join(state, "recfs"), 0o700); err != nil {
		t.Fatal(err)
	}
	full := append(bytes.Repeat([]byte("an old line of an earlier daemon\n"), daemonLogCap/33), "the last old line\n"...)
	if err := os.WriteFile(filepath.Join(state, "recfs", "daemon.log"), full, 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, "mount", "--daemon", "--json", "--no-cache", src, mnt)
	// No system log: RECFS_SYSLOG names a socket that is not there.
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "RECFS_SYSLOG="+filepath.Join(state, "no-log-socket"))
	r := runPrepared(t, c)
	detachAtCleanup(t, mnt)
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
	// The daemon is recfs-full: the lean recfs handed it the mount.
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", out.Pid))
	if err != nil || filepath.Base(exe) != "recfs-full" {
		t.Errorf("pid %d is not a live recfs-full: %q %v", out.Pid, exe, err)
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
	if bytes.Contains(logText, []byte("old line")) {
		t.Errorf("the full log was appended to, not rotated")
	}
	if old, err := os.ReadFile(wantLog + ".1"); err != nil || !bytes.Equal(old, full) {
		t.Errorf("%s.1 does not hold the full log (%d bytes, %v)", wantLog, len(old), err)
	}
}

// TestDaemonSyslog: where a system log listens (a fake /dev/log here,
// through RECFS_SYSLOG), a daemon without --log-file logs there, under
// its own pid, before the verdict and after it; no log file is made.
func TestDaemonSyslog(t *testing.T) {
	needFUSE(t)
	sock := filepath.Join(t.TempDir(), "log")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	src := tempLog(t, "ev.log", genRecords(50, 3, 30))
	mnt := newMountDir(t)
	state := t.TempDir()
	c := exec.Command(bin, "mount", "--daemon", "--json", "--no-cache", src, mnt)
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "RECFS_SYSLOG="+sock)
	r := runPrepared(t, c)
	detachAtCleanup(t, mnt)
	var out struct {
		Log string
		Pid int
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil {
		t.Fatalf("mount --daemon --json: %d %q %q (%v)", r.code, r.stdout, r.stderr, err)
	}
	if out.Log != "syslog" {
		t.Errorf("log %q; want syslog", out.Log)
	}
	if u := runRecfs(t, "unmount", mnt); u.code != 0 {
		t.Fatalf("unmount: %d %s", u.code, u.stderr)
	}
	// Lines from the daemon's pid, at facility daemon: the ready line
	// (sent while the parent waited) and the unmount (after it left).
	tag := fmt.Sprintf("recfs[%d]: ", out.Pid)
	want := map[string]bool{"daemon ready": false, "msg=unmounted": false}
	var got []string
	buf := make([]byte, 8192)
	for deadline := time.Now().Add(exitTimeout); !(want["daemon ready"] && want["msg=unmounted"]); {
		_ = conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("system log got %q, then %v", got, err)
		}
		line := string(buf[:n])
		got = append(got, line)
		if !strings.Contains(line, tag) || !regexp.MustCompile(`^<(2[4-9]|3[01])>`).MatchString(line) {
			continue
		}
		for w := range want {
			if strings.Contains(line, w) {
				want[w] = true
			}
		}
	}
	if _, err := os.Stat(filepath.Join(state, "recfs", "daemon.log")); !os.IsNotExist(err) {
		t.Errorf("a log file was made besides the system log: %v", err)
	}
}

// TestDaemonInterrupted: SIGINT to mount --daemon while the background
// process indexes ends both: exit status non-zero, "interrupted" said,
// nothing mounted, no server left. "after ready": the same when the
// signal reached mount --daemon (stopped meanwhile) before the background
// process sent its ready, but is handled only after: a stop delivered
// before the ready line is printed wins over it. "after ready, busy": the
// same with a process inside the mount by then; nobody was told of the
// mount, so the background process detaches it lazily at its first busy
// unmount rather than retry, and does not wait for the mount's users (its
// log says how often it tried, and that it detached without waiting).
func TestDaemonInterrupted(t *testing.T) {
	needFUSE(t)
	for _, tc := range []struct {
		name          string
		stopped, busy bool
	}{{"indexing", false, false}, {"after ready", true, false}, {"after ready, busy", true, true}} {
		t.Run(tc.name, func(t *testing.T) { checkDaemonInterrupted(t, tc.stopped, tc.busy) })
	}
}

// checkDaemonInterrupted sends SIGINT to mount --daemon a quarter into
// the build; with stopped, to the command stopped (SIGSTOP) until its
// background process has sent its verdict; with busy, a process then
// makes the mount its working directory.
func checkDaemonInterrupted(t *testing.T, stopped, busy bool) {
	// A source whose reads the test holds: the background process is
	// indexing when the signal comes, however fast the machine.
	p := servePaced(t, "big.log", progressLog(t))
	mnt := daemonMountDir(t)
	logPath := filepath.Join(t.TempDir(), "daemon.log")
	c := exec.Command(bin, "mount", "--daemon", "--no-cache", "--log-file", logPath, p.path, mnt)
	stderr := &syncbuf.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	t.Cleanup(func() {
		// On failure: let the build finish and the command end before
		// the mount's cleanup looks for a mount.
		p.open()
		_ = c.Process.Signal(syscall.SIGCONT)
		select {
		case <-exited:
		case <-time.After(exitTimeout):
			_ = c.Process.Kill()
			<-exited
		}
	})
	p.stepUntil(t, p.size/4)
	child := daemonChild(c.Process.Pid, mnt)
	if child == 0 {
		t.Fatalf("the file is read, but not by a background process")
	}
	if stopped {
		if err := c.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// The build goes on (and sees the signal) as the source answers.
	p.open()
	if stopped {
		// The background process mounts and sends "ready", then closes
		// its end of the status pipe (its descriptor 3).
		status := fmt.Sprintf("/proc/%d/fd/3", child)
		for deadline := time.Now().Add(exitTimeout); ; time.Sleep(5 * time.Millisecond) {
			if l, err := os.Readlink(status); err != nil || !strings.HasPrefix(l, "pipe:") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the background process sent no verdict in %v; stderr %q", exitTimeout, stderr.String())
			}
		}
		if mountedAt(mnt) == "" {
			t.Fatalf("the background process ended without mounting: it was told of the signal")
		}
		if busy {
			inside := exec.Command("sleep", "600")
			inside.Dir = mnt
			if err := inside.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = inside.Process.Kill()
				_ = inside.Wait()
			})
		}
		if err := c.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	select {
	case err = <-exited:
		exited <- err // for the cleanup
	case <-time.After(exitTimeout):
		t.Fatalf("mount --daemon still runs %v after SIGINT; stderr %q", exitTimeout, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("interrupted mount --daemon: %v, stderr %q", err, stderr.String())
	}
	// Stopped until the ready came, the command says the mount came up
	// and was ended, not that it never was.
	if stopped && !strings.Contains(stderr.String(), "became ready; the daemon ended it, nothing is mounted") {
		t.Errorf("interrupted after the ready: stderr %q does not say the mount was ended", stderr.String())
	}
	if m := mountedAt(mnt); m != "" {
		t.Errorf("%s mounted at %s after the interrupted start", m, mnt)
	}
	if busy {
		// One unmount, found busy, then the lazy detach: no retries.
		b, _ := os.ReadFile(logPath)
		m := regexp.MustCompile(`mount busy; detaching it lazily.* attempts=(\d+)`).FindSubmatch(b)
		if m == nil || string(m[1]) != "1" {
			t.Errorf("the background process retried the busy unmount nobody was told of (%q); log:\n%s", m, b)
		}
		// And it did not wait for the users of a mount nobody was told
		// of: it said so once detached.
		if !bytes.Contains(b, []byte("detached; nobody was told of the mount")) {
			t.Errorf("the background process did not say it left the detached mount's users unwaited; log:\n%s", b)
		}
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

// TestDaemonParentKilled: mount --daemon killed (SIGKILL: no chance to
// tell its background process) while that process indexes leaves neither
// a mount nor a process: the background process finds its parent gone
// before its verdict and stops as an interrupted start, rather than die
// of SIGPIPE on its parent's pipes with the mount half made.
func TestDaemonParentKilled(t *testing.T) {
	needFUSE(t)
	p := servePaced(t, "big.log", progressLog(t))
	mnt := daemonMountDir(t)
	logPath := filepath.Join(t.TempDir(), "daemon.log")
	c := exec.Command(bin, "mount", "--daemon", "--no-cache", "--log-file", logPath, p.path, mnt)
	orphanDaemon(t, c, p, mnt, logPath, func() string { return fmt.Sprintf("mounted: %q", mountedAt(mnt)) })
	if m := mountedAt(mnt); m != "" {
		b, _ := os.ReadFile(logPath)
		t.Errorf("%s left mounted at %s by the background process of a killed mount --daemon; log:\n%s", m, mnt, b)
	}
}

// orphanDaemon starts c, a --daemon command over the paced source p,
// waits until its background process (the one whose command line holds
// match) has read a quarter of p, kills c (SIGKILL: no chance to tell the
// background process), lets p answer again and waits until the background
// process has exited; state says what else the test sees when it does
// not. The background process must say in its log that its parent died
// (its standard error was the dead parent's). It returns that process's
// pid.
func orphanDaemon(t *testing.T, c *exec.Cmd, p *pacedFile, match, logPath string, state func() string) int {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.stepUntil(t, p.size/4)
	child := daemonChild(c.Process.Pid, match)
	if child == 0 {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("the file is read, but not by a background process")
	}
	t.Cleanup(func() {
		// On failure: end the background process before a mount's
		// cleanup looks for a mount.
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
			t.Fatalf("the background process %d still runs %v after its parent was killed (%s); log:\n%s", child, exitTimeout, state(), b)
		}
	}
	if b, _ := os.ReadFile(logPath); !strings.Contains(string(b), "parent died before the daemon was ready") {
		t.Errorf("the background process's log does not say its parent died; log:\n%s", b)
	}
	return child
}

// TestDaemonProgress runs mount --daemon on a pseudo-terminal over a
// paced source (a local file, an s3:// object): the parent draws the
// indexing progress the daemon reports, with the rate and the time left,
// then prints the ready line.
func TestDaemonProgress(t *testing.T) {
	needFUSE(t)
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		p := servePaced(t, "big.log", progressLog(t))
		mnt := daemonMountDir(t)
		checkPacedProgress(t, p.pacer, fmt.Sprintf("%s mount --daemon --no-cache --log-file - %s %s", bin, p.path, mnt), "ready: ")
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		p, env := pacedS3(t, "big.log", progressLog(t))
		mnt := daemonMountDir(t)
		line := fmt.Sprintf("%s %s mount --daemon --no-cache --log-file - %s %s", env, bin, vgw.URL("big.log"), mnt)
		checkPacedProgress(t, p, line, "ready: ")
	})
}

// TestDaemonHoldsNoCallerFD: a daemon keeps none of the descriptors its
// caller passed on to recfs mount --daemon (review finding F5): with the
// write end of a pipe as the command's fd 5, as a CI runner's or make's
// jobserver pipe would be, once the ready line is out and our copy is
// closed, the read end ends while the daemon still serves.
func TestDaemonHoldsNoCallerFD(t *testing.T) {
	needFUSE(t)
	src := tempLog(t, "ev.log", genRecords(53, 3, 30))
	mnt := newMountDir(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// Its name in /proc, from its inode (pr.Fd would make reads ignore
	// the deadline below).
	fi, err := pr.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf("pipe:[%d]", fi.Sys().(*syscall.Stat_t).Ino)
	c := exec.Command(bin, "mount", "--daemon", "--json", "--no-cache", "--log-file", filepath.Join(t.TempDir(), "daemon.log"), src, mnt)
	// fd 5 (3 and 4 closed): the daemon's own pipes take 3 and 4.
	c.ExtraFiles = []*os.File{nil, nil, pw}
	r := runPrepared(t, c)
	pw.Close()
	detachAtCleanup(t, mnt)
	if r.code != 0 {
		t.Fatalf("mount --daemon: %d %s", r.code, r.stderr)
	}
	var out struct{ Pid int }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Pid == 0 {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", out.Pid))
	if err != nil {
		t.Fatalf("daemon %d: %v", out.Pid, err)
	}
	for _, e := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", out.Pid, e.Name())); target == pipe {
			t.Errorf("daemon %d holds the caller's %s as fd %s", out.Pid, pipe, e.Name())
		}
	}
	if err := pr.SetReadDeadline(time.Now().Add(exitTimeout)); err != nil {
		t.Fatal(err)
	}
	if n, err := pr.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("read end of the caller's pipe: %d, %v; want EOF", n, err)
	}
	if err := syscall.Kill(out.Pid, 0); err != nil {
		t.Errorf("daemon %d gone: %v", out.Pid, err)
	}
	if u := runRecfs(t, "unmount", mnt); u.code != 0 {
		t.Errorf("unmount: %d %s", u.code, u.stderr)
	}
}

// daemonMountDir returns a directory to mount on whose cleanup unmounts
// what a daemon mounted there.
func daemonMountDir(t *testing.T) string {
	t.Helper()
	mnt := newMountDir(t)
	t.Cleanup(func() {
		if mountedAt(mnt) != "" {
			runRecfs(t, "unmount", mnt)
		}
	})
	return mnt
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
	recs := genRecords(49, 3, 20)
	src := tempLog(t, "ev.log", recs)
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
	// The lean recfs the service manager started became recfs-full (exec:
	// the same pid, so MAINPID is the pid it started).
	if !strings.Contains(msg, "READY=1\n") || !strings.Contains(msg, fmt.Sprintf("MAINPID=%d\n", m.cmd.Process.Pid)) {
		t.Errorf("notification %q: want READY=1 and MAINPID=%d", msg, m.cmd.Process.Pid)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", m.cmd.Process.Pid)); err != nil || filepath.Base(exe) != "recfs-full" {
		t.Errorf("the mount's pid %d runs %q (%v), want recfs-full", m.cmd.Process.Pid, exe, err)
	}
	// systemctl stop: SIGTERM. The service says it is stopping, then
	// unmounts and exits.
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(exitTimeout)); err != nil {
		t.Fatal(err)
	}
	n, err = conn.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "STOPPING=1\n") {
		t.Errorf("after SIGTERM: notification %q (%v); want STOPPING=1", buf[:n], err)
	}
	if code := m.wait(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM", code)
	}
	if mountedAt(mnt) != "" {
		t.Errorf("still mounted after SIGTERM")
	}
}

// daemonChild returns the pid of a process other than parent that has mnt
// in its command line (the daemon's background process), or 0.
func daemonChild(parent int, mnt string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/cmdline"))
		if err != nil || pid == parent {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), mnt) {
			return pid
		}
	}
	return 0
}
