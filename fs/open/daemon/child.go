package daemon

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Environment of a daemon child: the inherited file descriptors it
// reports readiness on, and it learns it was abandoned from.
const (
	envReadyFD   = "RECFS_READY_FD"
	envAbandonFD = "RECFS_ABANDON_FD"
)

// progressInterval rate-limits the child's progress lines.
const progressInterval = 100 * time.Millisecond

// Child is a daemon child's end of its status pipe (and of its abandon
// pipe). Its methods do nothing on a nil *Child, so a process that is not
// a daemon child can call them all.
type Child struct {
	mu          sync.Mutex
	f           *os.File
	abandon     int    // the abandon pipe's descriptor (-1: none)
	stop        func() // called when the parent died before the verdict
	done, total int64  // the last progress, sent or not
	pending     bool   // a send of the last progress is scheduled
	closed      bool   // the verdict was sent
	abandoned   bool   // the parent will not report the child ready (a byte came, or it died first)
}

// OpenChild returns this process's end of the pipes Spawn gave it, or nil
// when it is no daemon child (RECFS_READY_FD is unset). Call it once,
// early, before any other program runs: it unsets RECFS_READY_FD and
// RECFS_ABANDON_FD, so that no program the child runs takes their
// descriptors for its own, and takes the abandon pipe only when it is a
// pipe. A daemon child
// outlives its parent's death: writes to the parent's pipes (the status
// pipe, standard error until the verdict) then fail rather than raise
// SIGPIPE, and a parent gone before the verdict calls stop (which should
// stop the child as the SIGTERM its parent would have sent does: nobody
// will report what it serves, so it ends it at once).
func OpenChild(stop func()) *Child {
	ready, abandon := os.Getenv(envReadyFD), os.Getenv(envAbandonFD)
	_ = os.Unsetenv(envReadyFD)
	_ = os.Unsetenv(envAbandonFD)
	return openChild(ready, abandon, stop)
}

// openChild opens the status pipe on the descriptor numbered ready (nil
// when it names none) and the abandon pipe on the one numbered abandon,
// when that is a pipe, and starts watching it.
func openChild(ready, abandon string, stop func()) *Child {
	fd, err := strconv.Atoi(ready)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "status")
	if f == nil {
		return nil
	}
	// A write on a pipe whose reader died fails with EPIPE; Go kills the
	// process for it on descriptors 1 and 2 unless SIGPIPE is notified.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	c := &Child{f: f, abandon: -1, stop: stop}
	if fd, err := strconv.Atoi(abandon); err == nil && isPipe(fd) && syscall.SetNonblock(fd, true) == nil {
		syscall.CloseOnExec(fd)
		c.abandon = fd
		go c.watchParent()
	}
	return c
}

// isPipe reports whether the descriptor fd is open on a pipe (a FIFO).
func isPipe(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}

// Pending reports whether c is a daemon child that has not sent its
// verdict yet.
func (c *Child) Pending() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed
}

// Abandoned reports whether the child's parent gave up waiting for it (it
// was interrupted, or died) before it reported the child ready: then
// nobody was told of what the child serves. It is for the stop that
// follows (the parent writes on the abandon pipe before it signals).
func (c *Child) Abandoned() bool {
	if c == nil || c.abandon < 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.abandoned {
		c.readAbandon(false)
	}
	return c.abandoned
}

// Ready tells the waiting parent that the child is ready. Like Serving
// and Fail, it sends the child's verdict, once (later calls do nothing),
// and closes the status pipe; then, for the whole process, it points
// standard error (descriptor 2) at standard output, the log file, and
// logrus's standard logger at the capped log file (io.Discard when the
// daemon logs to the system log, through SetupLog's hook, or nowhere).
// Nil-safe, as are Serving and Fail.
func (c *Child) Ready() { c.verdict("ready") }

// Serving tells the waiting parent that the child is ready, with one line
// of what it serves (Started.Info; newlines become spaces), and redirects
// standard error and logrus's output as Ready does.
func (c *Child) Serving(info string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.closed {
		_, _ = c.f.WriteString("info " + strings.ReplaceAll(info, "\n", " ") + "\n")
	}
	c.mu.Unlock()
	c.verdict("ready")
}

// Fail passes the child's failure to its parent (StartError.Message;
// newlines become spaces), unless it sent its verdict already or err is
// nil, and redirects standard error and logrus's output as Ready does.
func (c *Child) Fail(err error) {
	if err == nil {
		return
	}
	c.verdict("error: " + strings.ReplaceAll(err.Error(), "\n", " "))
}

// verdict sends the final line, closes the pipe, points standard error
// at standard output (the log file) from now on, and logrus's standard
// logger at the log (see logOutput). It does nothing once sent.
func (c *Child) verdict(line string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	_, _ = c.f.WriteString(line + "\n")
	_ = c.f.Close()
	if err := syscall.Dup2(1, 2); err != nil {
		logrus.WithError(err).Warn("standard error stays on the parent's pipe")
	}
	logrus.SetOutput(logOutput())
}

// watchParent waits on the abandon pipe: for a byte (the parent was
// interrupted and signals the child next) or for its end before the
// verdict (the parent died: parentGone).
func (c *Child) watchParent() {
	for {
		fds := []unix.PollFd{{Fd: int32(c.abandon), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		c.mu.Lock()
		if c.readAbandon(true) || c.abandoned {
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// readAbandon reads the abandon pipe without blocking and reports whether
// it said anything for good: a byte (abandoned), or its end (the parent
// died: abandoned before the verdict, and parentGone when stop). It runs
// under c.mu.
func (c *Child) readAbandon(stop bool) bool {
	var b [1]byte
	n, err := syscall.Read(c.abandon, b[:])
	switch {
	case n > 0:
		c.abandoned = true
		return true
	case n == 0 && err == nil:
		if stop {
			c.parentGone("the abandon pipe ended")
		} else if !c.closed {
			c.abandoned = true
		}
		return true
	}
	return err != syscall.EAGAIN && err != syscall.EINTR
}

// parentGone stops a child whose parent died before its verdict (found by
// why): nobody will report what it serves, so it stops as an interrupted,
// unannounced start (c.stop), ending what it serves at once and leaving no
// process; its log lines go to the log from now on. After the verdict the
// child is on its own and goes on. It runs under c.mu.
func (c *Child) parentGone(why string) {
	if c.closed || c.abandoned {
		return
	}
	c.abandoned = true
	// Standard error was the parent's: point it at the log (standard
	// output), so that the stop's log lines are kept.
	_ = syscall.Dup2(1, 2)
	logrus.WithField("reason", why).Warn("the daemon's parent died before the daemon was ready; stopping")
	if c.stop != nil {
		c.stop()
	}
}

// Progress sends a progress line (work done of total), at most one per
// progressInterval: the last progress of each interval goes out at its
// end, so the parent never keeps an older one while the work stalls. It
// matches index.Options.Progress.
func (c *Child) Progress(done, total int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done, c.total = done, total
	if c.closed || c.pending {
		return
	}
	c.pending = true
	time.AfterFunc(progressInterval, c.sendProgress)
}

// sendProgress writes the last progress on the pipe.
func (c *Child) sendProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = false
	if c.closed {
		return
	}
	if _, err := fmt.Fprintf(c.f, "progress %d %d\n", c.done, c.total); errors.Is(err, syscall.EPIPE) {
		c.parentGone("the status pipe broke")
	}
}
