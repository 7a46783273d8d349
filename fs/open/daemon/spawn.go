// Package daemon runs a command in the background as recfs mount --daemon
// and recfs serve --daemon do: the parent re-runs its own program in a new
// session (Spawn), draws the child's progress and waits for its verdict;
// the child reports progress, readiness or failure on an inherited pipe
// (OpenChild) and learns from another that its parent gave up or died. It
// also opens where a daemon logs (OpenLog: the system log, or a capped,
// rotated file opened safely; SetupLog and the child's switch to the file
// after its verdict) and tells systemd of readiness (NotifyReady).
//
// Flags, which arguments the child runs with, and every message the user
// reads (the ready line, why a start failed) stay with the command.
//
// How it works: the child runs with RECFS_READY_FD naming an inherited pipe
// (the status pipe). It writes "progress DONE TOTAL" lines on it while it
// works, at most an "info LINE" line, then one "ready" or "error: MESSAGE"
// line, and the parent exits with the child's verdict. The child's
// standard output goes to the log file; its standard error goes to a
// second pipe until the verdict, so the parent has what fusermount3 and
// the FUSE library said when a mount fails (it copies it to the log file
// too); after the verdict the child points standard error at the log file.
//
// A third pipe, the abandon pipe (RECFS_ABANDON_FD), runs the other way: the
// parent interrupted before it reported the child ready (SIGINT, SIGTERM,
// SIGHUP) writes a byte on it, then sends the child SIGTERM, so the child
// knows nobody was told of what it serves and ends it at once (lazily when
// busy, not waiting for its users). The parent's end closes when it exits:
// the end of the pipe (or EPIPE on the status pipe) before the verdict
// means the parent died, and the child stops the same way (OpenChild's
// stop); after the verdict it is the parent's normal exit. The
// child notifies SIGPIPE, so its writes to a dead parent's pipes fail
// instead of killing it mid-start.
package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stderrTail is how many bytes of the child's early standard error the
// parent keeps to explain a failure.
const stderrTail = 4 << 10

// Options says how Spawn starts a daemon child.
type Options struct {
	// Path is the program the child runs; "" is this process's own
	// (os.Executable).
	Path string
	// Args are the child's arguments, without the program name.
	Args []string
	// Log, required, receives the child's standard output and a copy of
	// its early standard error; LogName is what it is, as OpenLog
	// returned it (the child learns it from RECFS_DAEMON_LOG). Log stays
	// the caller's to close.
	Log     *os.File
	LogName string
	// Progress, when set, is called with each progress line of the child
	// (work done and its total) while Spawn waits; ProgressDone, when
	// set, once the child's verdict came or its pipe ended, before Spawn
	// settles the verdict (the caller's bar can go before Spawn waits for
	// a failed child's exit).
	Progress     func(done, total int64)
	ProgressDone func()
	// Ready, when set, is called with the child once it is ready and
	// released, before Spawn stops watching for stop signals, so that the
	// caller reports it (prints its ready line) while a stop signal
	// arriving now is still caught and ignored: it is too late to end the
	// child, and a SIGHUP's default action would kill the caller before
	// it said what it started. Its error is Spawn's.
	Ready func(*Started) error
}

// Started is a daemon child that reported it is ready.
type Started struct {
	Pid  int    // the child's process id
	Info string // the last info line it sent before its verdict (see Child.Serving)
}

// WithoutFlag returns args without the boolean flag --name, in either of
// its forms (--name, --name=VALUE): the command line of a daemon child is
// its parent's without the flag that asked for a daemon (Options.Args).
func WithoutFlag(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// StartError says why a daemon child did not become ready, or was not
// kept although it did: the parent was interrupted (Interrupted; Ready
// when the child had just reported ready, and then ended what it made
// ready unless Err says it failed), or the child reported an error
// (Message) or exited without a verdict (Err).
type StartError struct {
	Message     string // the child's error line, without "error: "; "" when it sent none
	Interrupted bool   // the parent was told to stop before it reported the child ready
	Ready       bool   // the child's verdict was "ready"
	Err         error  // what waiting for the child returned (nil: it exited with status 0)
	Code        int    // the child's exit status when above 0, else 0
	stderr      []byte // the tail of the child's early standard error
}

// Error implements error: the child's message, or a generic sentence.
func (e *StartError) Error() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Interrupted:
		return "daemon start interrupted"
	}
	return fmt.Sprintf("daemon exited before it was ready (%v)", e.Err)
}

// Explanation returns the lines of the child's early standard error that
// are not log records (logrus's text or JSON lines) and do not start with
// one of the prefixes skip (the program's own error lines), without those
// said already contains: what fusermount3 or the FUSE library printed.
func (e *StartError) Explanation(said string, skip ...string) string {
	var out []string
lines:
	for _, l := range strings.Split(string(bytes.TrimSpace(e.stderr)), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "time=") || strings.HasPrefix(l, "{") || strings.Contains(said, l) {
			continue
		}
		for _, p := range skip {
			if strings.HasPrefix(l, p) {
				continue lines
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// Describe returns what a parent tells its user of a child that did not
// come up, or was not kept: what names what was to become ready ("the
// mount at /mnt"), none what a failure leaves ("nothing is mounted"). It
// is the child's message, or why the parent has none (interrupted, before
// or just as the child became ready, and whether the child then failed to
// end it; or the child exited without a verdict), then the lines of
// Explanation(msg, skip...).
func (e *StartError) Describe(what, none string, skip ...string) string {
	msg := e.Message
	switch {
	case e.Interrupted && e.Ready && e.Err != nil:
		msg = fmt.Sprintf("interrupted as %s became ready, and the daemon failed to end it (%v): see its log", what, e.Err)
	case e.Interrupted && e.Ready:
		msg = fmt.Sprintf("interrupted as %s became ready; the daemon ended it, %s", what, none)
	case e.Interrupted:
		// Having exited, the child left nothing served.
		msg = fmt.Sprintf("interrupted before %s was ready; %s", what, none)
	case msg == "":
		msg = fmt.Sprintf("daemon exited before %s was ready (%v)", what, e.Err)
	}
	if extra := e.Explanation(msg, skip...); extra != "" {
		msg += "\n" + extra
	}
	return msg
}

// Spawn starts a daemon child as o says, in a new session, and waits for
// its verdict, passing its progress lines to o.Progress. A child that
// reports ready is released and described by Started, which Spawn passes
// to o.Ready (when set) and returns, with Ready's error. Otherwise Spawn
// waits for its exit and returns a *StartError; any other error means no
// child started. ctx ending, or SIGINT, SIGTERM or SIGHUP while Spawn
// waits (the user gave up), ends the child too, rather than leave it to
// serve behind the user's back: the child is told first, on the abandon
// pipe, that nobody will hear of what it serves. A stop signal delivered
// before Spawn accepts a ready verdict always wins, however late the Go
// runtime hands it on (Spawn signals itself and each of its threads with
// SIGWINCH, and waits for each, before it accepts the verdict).
//
// While it starts the child, Spawn marks every descriptor of this process
// above standard error close-on-exec, so that the child inherits none of
// them, and then unmarks those it marked; a program another goroutine
// starts meanwhile (with os/exec) inherits none of them either. Spawns
// from several goroutines take turns at that step. Without /proc the
// marks cannot be undone and stay (see closeOnExec).
func Spawn(ctx context.Context, o Options) (*Started, error) {
	c, err := start(o)
	if err != nil {
		return nil, err
	}
	defer c.status.Close()
	defer c.abandon.Close()
	// decided settles the race between an interruption and the verdict:
	// 1 once the child was told to stop, 2 once we settled on its verdict.
	var decided atomic.Int32
	w := watchStops(ctx, func() {
		if decided.CompareAndSwap(0, 1) {
			_, _ = c.abandon.Write([]byte{'x'})
			_ = c.child.Process.Signal(syscall.SIGTERM)
		}
	})
	defer w.close()
	verdict, info := c.verdict(o.Progress)
	if o.ProgressDone != nil {
		o.ProgressDone()
	}
	if verdict == "ready" {
		// A stop signal that reached us before the caller reports the
		// child ready wins, however late the runtime hands it on: the
		// child, told, ends what it made ready.
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
		s := &Started{Pid: pid, Info: info}
		if o.Ready != nil {
			return s, o.Ready(s)
		}
		return s, nil
	}
	return nil, c.failure(verdict, interrupted)
}

// spawned is a started daemon child: its status pipe, the pipe that tells
// it it was abandoned (a byte written before it is told to stop: its
// parent will not report it ready; closed unwritten, by our exit, once the
// parent has), and its early standard error being copied to the log
// (copied closes when done).
type spawned struct {
	child   *exec.Cmd
	status  *os.File
	abandon *os.File
	tail    tailBuffer
	copied  chan struct{}
}

// start starts the daemon child in a new session, its output to o.Log,
// its status lines on a pipe, and a pipe to tell it it was abandoned.
func start(o Options) (*spawned, error) {
	exe := o.Path
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
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
	child := exec.Command(exe, o.Args...)
	child.Env = append(os.Environ(), envReadyFD+"=3", envAbandonFD+"=4", envDaemonLog+"="+o.LogName)
	child.Stdout, child.Stderr = o.Log, errW
	child.ExtraFiles = []*os.File{statusW, abandonR}
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	startMu.Lock()
	restore := closeOnExec()
	err = child.Start()
	restore()
	startMu.Unlock()
	statusW.Close()
	abandonR.Close()
	errW.Close()
	if err != nil {
		status.Close()
		abandon.Close()
		errR.Close()
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	c := &spawned{child: child, status: status, abandon: abandon, copied: make(chan struct{})}
	// Copy the child's early standard error to the log, keeping its tail.
	go func() {
		_, _ = io.Copy(io.MultiWriter(o.Log, &c.tail), errR)
		errR.Close()
		close(c.copied)
	}()
	return c, nil
}

// startMu serializes closeOnExec, the child's start and the restore
// between Spawns: one Spawn's restore must not unmark the descriptors
// while another starts its child.
var startMu sync.Mutex

// closeOnExec marks every descriptor of this process above standard
// error that lacks close-on-exec (what it inherited so, from a shell's
// 5>file or a make jobserver) close-on-exec, so that a child it starts
// holds none of them: a daemon holding a caller's pipe keeps the caller
// waiting for its end. The child's own descriptors are unaffected: exec
// gives it copies (dup2 clears the flag on those). It returns a function
// that unmarks them, so this process passes them on as before to
// programs it starts later. Doing it in the parent, before the exec,
// cannot close a descriptor the child's runtime or FUSE library opened,
// as closing them in the child could. It reads /proc/self/fd; without it,
// it marks every descriptor above 2 with close_range(2) and cannot unmark
// them.
func closeOnExec() (restore func()) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
		return func() {}
	}
	type markedFD struct {
		fd       int
		dev, ino uint64
	}
	var marked []markedFD
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		var st unix.Stat_t
		if err != nil || fd <= 2 || unix.Fstat(fd, &st) != nil {
			continue
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, fl|unix.FD_CLOEXEC); err == nil {
				marked = append(marked, markedFD{fd, st.Dev, st.Ino})
			}
		}
	}
	return func() {
		for _, m := range marked {
			// Only the same file: a descriptor closed meanwhile and its
			// number reused keeps its close-on-exec.
			var st unix.Stat_t
			if unix.Fstat(m.fd, &st) != nil || st.Dev != m.dev || st.Ino != m.ino {
				continue
			}
			if fl, err := unix.FcntlInt(uintptr(m.fd), unix.F_GETFD, 0); err == nil {
				_, _ = unix.FcntlInt(uintptr(m.fd), unix.F_SETFD, fl&^unix.FD_CLOEXEC)
			}
		}
	}
}

// verdict reads the child's status lines, passing its progress to
// progress (when set) and keeping its last info line, until its verdict
// ("ready" or "error: …"; "" if it ended without one).
func (c *spawned) verdict(progress func(done, total int64)) (verdict, info string) {
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
		if progress != nil && err1 == nil && err2 == nil {
			progress(done, total)
		}
	}
	return "", info
}

// failure waits for the child that did not become ready (or was not kept)
// and says why.
func (c *spawned) failure(verdict string, interrupted bool) *StartError {
	werr := c.child.Wait()
	<-c.copied
	e := &StartError{Interrupted: interrupted, Ready: verdict == "ready", Err: werr}
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		e.Code = ee.ExitCode()
	}
	if !e.Ready {
		e.Message = strings.TrimSpace(strings.TrimPrefix(verdict, "error: "))
	}
	c.tail.mu.Lock()
	e.stderr = bytes.Clone(c.tail.b)
	c.tail.mu.Unlock()
	return e
}

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

// Write implements io.Writer.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > stderrTail {
		t.b = t.b[len(t.b)-stderrTail:]
	}
	return len(p), nil
}
