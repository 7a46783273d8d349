package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The daemon child's end of the status pipe (daemon.go, in recfs-full,
// has the rest): in both links, because every command that builds an
// index reports its progress through it when it runs in a daemon child.

// Environment of a daemon child: the inherited file descriptors it
// reports readiness on, and it learns it was abandoned from.
const (
	envReadyFD   = "RECFS_READY_FD"
	envAbandonFD = "RECFS_ABANDON_FD"
)

// daemonProgressInterval rate-limits the child's progress lines.
const daemonProgressInterval = 100 * time.Millisecond

// daemonStatus is the status pipe of a daemon child (nil in any other
// process), opened once from envReadyFD, with the abandon pipe from
// envAbandonFD (read by daemonAbandoned and watchParent; not passed on to
// programs the child runs). It unsets both variables, so that no program
// the child runs takes their descriptors for its own, and takes the
// abandon pipe only when it is a pipe. A daemon child outlives its
// parent's death: writes to the parent's pipes (the status pipe, standard
// error until the verdict) then fail rather than raise SIGPIPE, and a
// parent gone before the verdict stops the child (see parentGone).
var daemonStatus = sync.OnceValue(func() *statusPipe {
	ready, abandon := os.Getenv(envReadyFD), os.Getenv(envAbandonFD)
	_ = os.Unsetenv(envReadyFD)
	_ = os.Unsetenv(envAbandonFD)
	return openStatusPipe(ready, abandon)
})

// openStatusPipe opens the status pipe on the descriptor numbered ready
// (nil when it names none) and the abandon pipe on the one numbered
// abandon, when that is a pipe, and starts watching it.
func openStatusPipe(ready, abandon string) *statusPipe {
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
	s := &statusPipe{f: f, abandon: -1}
	if fd, err := strconv.Atoi(abandon); err == nil && isPipe(fd) && syscall.SetNonblock(fd, true) == nil {
		syscall.CloseOnExec(fd)
		s.abandon = fd
		go s.watchParent()
	}
	return s
}

// isPipe reports whether the descriptor fd is open on a pipe (a FIFO).
func isPipe(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}

// daemonChild reports whether this process is a daemon child that has not
// reported its verdict yet.
func daemonChild() bool {
	s := daemonStatus()
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// statusPipe is the child's end of the status pipe (and of the abandon
// pipe).
type statusPipe struct {
	mu          sync.Mutex
	f           *os.File
	abandon     int   // the abandon pipe's descriptor (-1: none)
	done, total int64 // the last progress, sent or not
	pending     bool  // a send of the last progress is scheduled
	closed      bool  // the verdict was sent
	abandoned   bool  // the parent will not report the child ready (a byte came, or it died first)
}

// watchParent waits on the abandon pipe: for a byte (the parent was
// interrupted and signals the child next) or for its end before the
// verdict (the parent died: parentGone).
func (s *statusPipe) watchParent() {
	for {
		fds := []unix.PollFd{{Fd: int32(s.abandon), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		s.mu.Lock()
		if s.readAbandon(true) || s.abandoned {
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// readAbandon reads the abandon pipe without blocking and reports whether
// it said anything for good: a byte (abandoned), or its end (the parent
// died: abandoned before the verdict, and parentGone when stop). It runs
// under s.mu.
func (s *statusPipe) readAbandon(stop bool) bool {
	var b [1]byte
	n, err := syscall.Read(s.abandon, b[:])
	switch {
	case n > 0:
		s.abandoned = true
		return true
	case n == 0 && err == nil:
		if stop {
			s.parentGone("the abandon pipe ended")
		} else if !s.closed {
			s.abandoned = true
		}
		return true
	}
	return err != syscall.EAGAIN && err != syscall.EINTR
}

// parentGone stops a child whose parent died before its verdict (found by
// why): nobody will report what it serves, so it stops as an interrupted,
// unannounced start (stopDaemonChild ends the command's context, as the
// SIGTERM its parent would have sent), unmounting at once and leaving no
// process; its log lines go to the log from now on. After the verdict the
// child is on its own and goes on. It runs under s.mu.
func (s *statusPipe) parentGone(why string) {
	if s.closed || s.abandoned {
		return
	}
	s.abandoned = true
	// Standard error was the parent's: point it at the log (standard
	// output), so that the stop's log lines are kept.
	_ = syscall.Dup2(1, 2)
	logrus.WithField("reason", why).Warn("the daemon's parent died before the daemon was ready; stopping")
	if stopDaemonChild != nil {
		stopDaemonChild()
	}
}

// stopDaemonChild ends the command's context (main sets it), as a stop
// signal does.
var stopDaemonChild func()

// progress sends an indexing progress line, at most one per
// daemonProgressInterval: the last progress of each interval goes out at
// its end, so the parent never keeps an older one while the build stalls.
// It matches index.Options.Progress.
func (s *statusPipe) progress(done, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done, s.total = done, total
	if s.closed || s.pending {
		return
	}
	s.pending = true
	time.AfterFunc(daemonProgressInterval, s.sendProgress)
}

// sendProgress writes the last progress on the pipe.
func (s *statusPipe) sendProgress() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = false
	if s.closed {
		return
	}
	if _, err := fmt.Fprintf(s.f, "progress %d %d\n", s.done, s.total); errors.Is(err, syscall.EPIPE) {
		s.parentGone("the status pipe broke")
	}
}
