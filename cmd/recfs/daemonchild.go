package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
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
// envAbandonFD (read by daemonAbandoned; not passed on to programs the
// child runs).
var daemonStatus = sync.OnceValue(func() *statusPipe {
	fd, err := strconv.Atoi(os.Getenv(envReadyFD))
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "status")
	if f == nil {
		return nil
	}
	s := &statusPipe{f: f, abandon: -1}
	if fd, err := strconv.Atoi(os.Getenv(envAbandonFD)); err == nil && syscall.SetNonblock(fd, true) == nil {
		syscall.CloseOnExec(fd)
		s.abandon = fd
	}
	return s
})

// daemonChild reports whether this process is a daemon child that has not
// reported its verdict yet.
func daemonChild() bool { return os.Getenv(envReadyFD) != "" && daemonStatus() != nil }

// statusPipe is the child's end of the status pipe (and of the abandon
// pipe).
type statusPipe struct {
	mu          sync.Mutex
	f           *os.File
	abandon     int   // the abandon pipe's descriptor (-1: none)
	done, total int64 // the last progress, sent or not
	pending     bool  // a send of the last progress is scheduled
	closed      bool
}

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
	if !s.closed {
		fmt.Fprintf(s.f, "progress %d %d\n", s.done, s.total)
	}
}
