//go:build !recfs_lean

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
)

// How `recfs mount --daemon` works: the parent runs the same command line
// again without --daemon, in a new session, with envReadyFD naming an
// inherited pipe (the status pipe). The child writes "progress DONE TOTAL"
// lines on it while it indexes, then one "ready" or "error: MESSAGE" line,
// and the parent draws the progress bar on its own terminal and exits with
// the child's verdict. The child's standard output goes to the log file;
// its standard error goes to a second pipe until the verdict, so the
// parent has what fusermount3 and the FUSE library said when a mount
// fails (it copies it to the log file too); after the verdict the child
// points standard error at the log file.
//
// A third pipe, the abandon pipe (envAbandonFD), runs the other way: the
// parent interrupted before it printed the ready line (SIGINT, SIGTERM,
// SIGHUP) writes a byte on it, then sends the child SIGTERM, so the child
// knows nobody was told of its mount and ends it at once (lazily when
// busy, not waiting for its users). The parent's end closes when it exits:
// the end of the pipe (or EPIPE on the status pipe) before the verdict
// means the parent died, and the child stops the same way (see
// parentGone); after the verdict it is the parent's normal exit. The
// child notifies SIGPIPE, so its writes to a dead parent's pipes fail
// instead of killing it mid-mount.

// daemonLogName is the default log file of daemons, in stateDir().
const daemonLogName = "daemon.log"

// stderrTail is how many bytes of the child's early standard error the
// parent keeps to explain a failure.
const stderrTail = 4 << 10

// stateDir returns recfs's state directory: $XDG_STATE_HOME/recfs, else
// ~/.local/state/recfs.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "recfs"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "recfs"), nil
}

// openDaemonLog opens where a daemon logs: the file at path, or by default
// (path "") the system log when one listens, else the file daemon.log in
// stateDir(), or nothing when path is "-". It returns the file the
// daemon's output goes to (the null device for the system log or none)
// and what it names: the file's absolute path, logSyslog, or "" for none.
// stateDir() is made private (0700); neither it nor a log file may be a
// symbolic link, and a full log file is rotated (see daemonLogCap).
func openDaemonLog(path string) (*os.File, string, error) {
	switch path {
	case "":
		p, err := defaultDaemonLog()
		if err != nil {
			return nil, "", err
		}
		path = p
	case logSyslog:
		// Asked for by name: say so when none listens.
		w, err := dialSyslog()
		if err != nil {
			return nil, "", fmt.Errorf("--log-file syslog: %w", err)
		}
		_ = w.Close()
	}
	if path == "-" || path == logSyslog {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if path == "-" {
			path = ""
		}
		return f, path, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	f, err := openLogFile(path)
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

// startDaemon re-runs this command in a new session without --daemon and
// waits for the child to report that the mount is ready (or why it failed),
// drawing its indexing progress on our terminal meanwhile.
func startDaemon(cmd *cobra.Command, f *mountFlags, src, mnt string) error {
	return spawnDaemon(cmd, daemonSpec{logFile: f.logFile, src: src, what: "the mount at " + mnt, none: "nothing is mounted",
		ready: func(pid int, logPath, _ string) error { return printReady(cmd, src, mnt, pid, logPath) }})
}

// daemonSpec says what a daemon child serves and how its parent reports
// it.
type daemonSpec struct {
	logFile string // --log-file
	src     string // the source, for the progress bar
	what    string // what becomes ready ("the mount at MNT")
	none    string // what is left after a failure ("nothing is mounted")
	// ready prints what the child serves: its pid, its log and the last
	// info line it sent before its verdict (see reportServing).
	ready func(pid int, logPath, info string) error
}

// spawnDaemon re-runs this command in a new session without --daemon and
// waits for the child's verdict, as d says.
func spawnDaemon(cmd *cobra.Command, d daemonSpec) error {
	logf, logPath, err := openDaemonLog(d.logFile)
	if err != nil {
		return err
	}
	defer logf.Close()
	c, err := startChild(cmd, logf, logPath)
	if err != nil {
		return err
	}
	defer c.status.Close()
	defer c.abandon.Close()
	// SIGINT, SIGTERM or SIGHUP while we wait (the user gave up): end the
	// child too, rather than leave it to mount behind the user's back,
	// and tell it first that nobody will hear of what it serves.
	// decided settles the race between an interruption and the verdict:
	// 1 once the child was told to stop, 2 once we settled on its verdict.
	var decided atomic.Int32
	w := watchStops(cmd.Context(), func() {
		if decided.CompareAndSwap(0, 1) {
			_, _ = c.abandon.Write([]byte{'x'})
			_ = c.child.Process.Signal(syscall.SIGTERM)
		}
	})
	defer w.close()
	verdict, info := c.verdict(cmd, d.src)
	if verdict == "ready" {
		// A stop signal that reached us before we print the ready line
		// wins, however late the runtime hands it on: the child, told,
		// ends what it made ready.
		w.flush()
	}
	interrupted := !decided.CompareAndSwap(0, 2)
	if verdict == "ready" && !interrupted {
		pid := c.child.Process.Pid
		_ = c.child.Process.Release()
		select {
		case <-c.copied:
		case <-time.After(time.Second):
		}
		return d.ready(pid, logPath, info)
	}
	return c.failure(verdict, d, interrupted)
}

// spawnedChild is a started daemon child: its status pipe, the pipe that
// tells it it was abandoned (a byte written before it is told to stop:
// its parent will not report it ready; closed unwritten, by our exit, once
// the parent has), and its early standard error being copied to the log
// (copied closes when done).
type spawnedChild struct {
	child   *exec.Cmd
	status  *os.File
	abandon *os.File
	tail    tailBuffer
	copied  chan struct{}
}

// daemonArgs is this command line without --daemon.
func daemonArgs(cmd *cobra.Command) []string {
	argv, _ := cmd.Context().Value(argvKey{}).([]string)
	if argv == nil {
		argv = os.Args[1:]
	}
	var args []string
	for _, a := range argv {
		if a == "--daemon" || strings.HasPrefix(a, "--daemon=") {
			continue
		}
		args = append(args, a)
	}
	return args
}

// startChild starts the daemon child in a new session, its output to
// logf (at logPath), its status lines on a pipe, and a pipe to tell it it
// was abandoned.
func startChild(cmd *cobra.Command, logf *os.File, logPath string) (*spawnedChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	status, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	abandonR, abandon, err := os.Pipe()
	if err != nil {
		status.Close()
		statusW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		status.Close()
		statusW.Close()
		abandonR.Close()
		abandon.Close()
		return nil, err
	}
	child := exec.Command(exe, daemonArgs(cmd)...)
	child.Env = append(os.Environ(), envReadyFD+"=3", envAbandonFD+"=4", envDaemonLog+"="+logPath)
	child.Stdout, child.Stderr = logf, errW
	child.ExtraFiles = []*os.File{statusW, abandonR}
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = child.Start()
	statusW.Close()
	abandonR.Close()
	errW.Close()
	if err != nil {
		status.Close()
		abandon.Close()
		errR.Close()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	c := &spawnedChild{child: child, status: status, abandon: abandon, copied: make(chan struct{})}
	// Copy the child's early standard error to the log, keeping its tail.
	go func() {
		_, _ = io.Copy(io.MultiWriter(logf, &c.tail), errR)
		errR.Close()
		close(c.copied)
	}()
	return c, nil
}

// verdict reads the child's status lines, drawing its progress and
// keeping its last info line, until its verdict ("ready" or "error: …";
// "" if it ended without one).
func (c *spawnedChild) verdict(cmd *cobra.Command, src string) (verdict, info string) {
	bar := newProgressBar(cmd.ErrOrStderr(), "indexing "+src)
	if bar != nil {
		defer bar.Done()
	}
	sc := bufio.NewScanner(c.status)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "info "); ok {
			info = p
			continue
		}
		p, ok := strings.CutPrefix(line, "progress ")
		if !ok {
			return line, info
		}
		ds, ts, _ := strings.Cut(p, " ")
		done, err1 := strconv.ParseInt(ds, 10, 64)
		total, err2 := strconv.ParseInt(ts, 10, 64)
		if bar != nil && err1 == nil && err2 == nil {
			bar.Update(done, total)
		}
	}
	return "", info
}

// failure waits for the child that did not become ready and returns why,
// with its exit status.
func (c *spawnedChild) failure(verdict string, d daemonSpec, interrupted bool) error {
	werr := c.child.Wait()
	<-c.copied
	code := exitFailure
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	msg := strings.TrimSpace(strings.TrimPrefix(verdict, "error: "))
	switch {
	case interrupted && verdict == "ready" && werr != nil:
		// Told to stop just after its ready, the child failed to undo it.
		msg, code = fmt.Sprintf("interrupted as %s became ready, and the daemon failed to end it (%v): see its log", d.what, werr), exitFailure
	case interrupted && verdict == "ready":
		// Told to stop just after its ready, the child undid it.
		msg, code = fmt.Sprintf("interrupted as %s became ready; the daemon ended it, %s", d.what, d.none), exitFailure
	case interrupted:
		// The child was told to stop; having exited, it left no mount.
		msg, code = fmt.Sprintf("interrupted before %s was ready; %s", d.what, d.none), exitFailure
	}
	if msg == "" {
		msg = fmt.Sprintf("daemon exited before %s was ready (%v)", d.what, werr)
	}
	if extra := c.tail.explanation(msg); extra != "" {
		msg += "\n" + extra
	}
	return &exitError{code: code, err: errors.New(msg)}
}

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > stderrTail {
		t.b = t.b[len(t.b)-stderrTail:]
	}
	return len(p), nil
}

// explanation returns the lines of the child's standard error that are not
// log records (what fusermount3 or the FUSE library printed), without
// those msg already says.
func (t *tailBuffer) explanation(msg string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(bytes.TrimSpace(t.b)), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "time=") || strings.HasPrefix(l, "{") || strings.HasPrefix(l, "recfs: ") || strings.Contains(msg, l) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// daemonAbandoned reports whether this daemon child's parent gave up
// waiting for it (it was interrupted) before it reported the child ready:
// then nobody was told of what the child serves. It is for the stop that
// follows (the parent writes on the abandon pipe before it signals).
func daemonAbandoned() bool {
	s := daemonStatus()
	if s == nil || s.abandon < 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.abandoned {
		s.readAbandon(false)
	}
	return s.abandoned
}

// verdict sends the final line, closes the pipe, and points standard error
// at standard output (the log file) from now on.
func (s *statusPipe) verdict(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	_, _ = s.f.WriteString(line + "\n")
	_ = s.f.Close()
	if err := syscall.Dup2(1, 2); err != nil {
		logrus.WithError(err).Warn("standard error stays on the parent's pipe")
	}
	logrus.SetOutput(daemonLogOutput())
}

// reportReady tells a waiting parent that the mount is ready.
func reportReady(src, mnt string) {
	logrus.WithFields(logrus.Fields{"source": src, "mountpoint": mnt, "pid": os.Getpid()}).Info("daemon ready")
	if s := daemonStatus(); s != nil {
		s.verdict("ready")
	}
}

// reportServing tells a waiting parent that the server is ready, with one
// line of what it serves (info, which its ready function prints).
func reportServing(info string) {
	if s := daemonStatus(); s != nil {
		s.mu.Lock()
		if !s.closed {
			_, _ = s.f.WriteString("info " + strings.ReplaceAll(info, "\n", " ") + "\n")
		}
		s.mu.Unlock()
		s.verdict("ready")
	}
}

// reportDaemonError passes a daemon child's failure to its parent. It is
// called by the mount command's error path.
func reportDaemonError(err error) {
	if err == nil {
		return
	}
	if s := daemonStatus(); s != nil {
		s.verdict("error: " + strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// printReady prints the ready line of a mount (pid 0: served by this
// process), as JSON under --json.
func printReady(cmd *cobra.Command, src, mnt string, pid int, logPath string) error {
	if wantJSON(cmd) {
		v := map[string]any{"status": "ready", "source": src, "mountpoint": mnt, "pid": os.Getpid(), "daemon": pid != 0}
		if pid != 0 {
			v["pid"] = pid
			v["log"] = logPath
		}
		return printJSON(cmd.OutOrStdout(), v)
	}
	line := fmt.Sprintf("ready: %s mounted at %s", src, mnt)
	switch {
	case pid != 0 && logPath != "":
		line += fmt.Sprintf(" (daemon pid %d, log %s)", pid, logPath)
	case pid != 0:
		line += fmt.Sprintf(" (daemon pid %d)", pid)
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), line)
	return err
}
