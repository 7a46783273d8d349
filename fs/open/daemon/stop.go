package daemon

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A parent waiting for its daemon child's verdict may be told to stop
// (SIGINT, SIGTERM) just as the child says "ready". The signal travels
// through the Go runtime's signal goroutine and a channel before the
// parent sees it, so "the user pressed Ctrl-C before the ready line was
// printed" would be decided by goroutine scheduling. stopWatch makes it a
// fact: before it accepts a ready verdict, the parent sends barrierSignal
// to itself, then to each of its threads, and waits for each; every stop
// signal the process had been sent by then has been seen first (see
// flush).

// stopSignals are the signals that stop a parent waiting for its daemon:
// SIGINT and SIGTERM, as they stop any command, and SIGHUP, its terminal
// closed.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// barrierSignal is what a parent sends itself to learn that the stop
// signals delivered before it have reached it. Its number is above
// theirs: the kernel dequeues a process's pending signals lowest number
// first, and the Go runtime hands on the signals it holds lowest number
// first, to channels in that order. SIGWINCH is harmless to send: it is
// ignored unless asked for, and a real one (the terminal resized while we
// wait) only ends a wait early, which leaves the race as it was.
const barrierSignal = syscall.SIGWINCH

// stopWatch calls its stop function once, on the first SIGINT or SIGTERM
// (or when its context ends), until it is closed.
type stopWatch struct {
	stops   chan os.Signal
	barrier chan os.Signal
	flushes chan chan struct{}
	quit    chan struct{}
	ended   chan struct{}
}

// watchStops starts watching for stop signals; onStop runs on the
// watcher's goroutine, at most once. Close the watch when done.
func watchStops(ctx context.Context, onStop func()) *stopWatch {
	w := &stopWatch{
		stops:   make(chan os.Signal, 2),
		barrier: make(chan os.Signal, 2),
		flushes: make(chan chan struct{}),
		quit:    make(chan struct{}),
		ended:   make(chan struct{}),
	}
	signal.Notify(w.stops, stopSignals...)
	signal.Notify(w.barrier, barrierSignal)
	go w.run(ctx, onStop)
	return w
}

// run is the watcher's loop.
func (w *stopWatch) run(ctx context.Context, onStop func()) {
	defer close(w.ended)
	done := ctx.Done()
	stop := func() {
		if onStop == nil {
			return
		}
		// Once stopped, a second signal gets the default action again
		// (unless the program catches it): it kills a parent stuck
		// waiting.
		signal.Stop(w.stops)
		onStop()
		onStop, done = nil, nil
	}
	var waiting []chan struct{}
	for {
		select {
		case <-w.stops:
			stop()
		case <-done:
			stop()
		case f := <-w.flushes:
			waiting = append(waiting, f)
		case <-w.barrier:
			// A stop signal handed on before the barrier is in w.stops
			// already; select picks among ready cases at random.
			select {
			case <-w.stops:
				stop()
			default:
			}
			for _, f := range waiting {
				close(f)
			}
			waiting = nil
		case <-w.quit:
			return
		}
	}
}

// flush returns once the watcher has seen every stop signal delivered to
// this process before flush was called (and run onStop for the first).
// A signal travels in two legs, each closed by a barrier: from the
// process's pending set to the thread that takes it (a barrier sent to
// the process is taken after it, being higher), then through that
// thread's handler into the runtime (a barrier sent to each thread waits,
// on that thread, until the handlers it has begun have run).
func (w *stopWatch) flush() {
	pid := os.Getpid()
	w.barrierTo(func() error { return syscall.Kill(pid, barrierSignal) })
	tids, _ := os.ReadDir("/proc/self/task")
	for _, e := range tids {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || blocksBarrier(tid) {
			continue
		}
		w.barrierTo(func() error { return syscall.Tgkill(pid, tid, barrierSignal) })
	}
}

// barrierWait bounds the wait for one barrier, in case the thread it was
// sent to ends before taking it.
const barrierWait = time.Second

// barrierTo sends a barrier with send and waits until the watcher has it.
func (w *stopWatch) barrierTo(send func() error) {
	f := make(chan struct{})
	w.flushes <- f
	if send() != nil {
		return
	}
	select {
	case <-f:
	case <-time.After(barrierWait):
	}
}

// blocksBarrier reports whether thread tid of this process keeps
// barrierSignal blocked at rest (a mask inherited from whoever started
// us), so a barrier sent to it would wait out barrierWait. A thread
// inside a signal handler, or being created, blocks every signal for the
// moment: that is the thread a stop signal may be half-way through, the
// one that must get its barrier. The runtime keeps SIGSEGV unblocked on
// its threads at rest, so a mask that blocks SIGSEGV too is of that
// moment, not of the thread.
func blocksBarrier(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigBlk:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err != nil || blockedAtRest(m)
		}
	}
	return true
}

// blockedAtRest reports whether a thread whose signal mask is m (as
// /proc shows SigBlk) keeps barrierSignal blocked at rest.
func blockedAtRest(m uint64) bool {
	has := func(sig syscall.Signal) bool { return m&(1<<(uint(sig)-1)) != 0 }
	return has(barrierSignal) && !has(syscall.SIGSEGV)
}

// close stops watching; onStop is not called after it returns.
func (w *stopWatch) close() {
	close(w.quit)
	<-w.ended
	signal.Stop(w.stops)
	signal.Stop(w.barrier)
}
