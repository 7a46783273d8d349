package daemon

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestStopWatchFlush: a stop signal delivered before flush has been seen
// (onStop run, once) when flush returns, every time, however the runtime
// schedules its signal goroutine; without one, flush returns and onStop
// does not run. Without the barriers every round fails; with the
// process's barrier alone, a few rounds in 200 under load.
func TestStopWatchFlush(t *testing.T) {
	// Keep SIGINT and SIGTERM caught between watches (the watcher stops
	// catching after the first), so a test process is never killed.
	keep := make(chan os.Signal, 1)
	signal.Notify(keep, stopSignals...)
	defer signal.Stop(keep)
	const rounds = 200
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: none
		want int32
	}{
		{"SIGINT", syscall.SIGINT, 1},
		{"SIGTERM", syscall.SIGTERM, 1},
		{"SIGHUP", syscall.SIGHUP, 1},
		{"none", 0, 0},
	} {
		late := 0
		for i := 0; i < rounds; i++ {
			var stops atomic.Int32
			w := watchStops(context.Background(), func() { stops.Add(1) })
			if tc.sig != 0 {
				if err := syscall.Kill(os.Getpid(), tc.sig); err != nil {
					t.Fatal(err)
				}
			}
			w.flush()
			if stops.Load() != tc.want {
				late++
			}
			// A second signal does not stop twice.
			if tc.sig != 0 {
				_ = syscall.Kill(os.Getpid(), tc.sig)
				w.flush()
			}
			w.close()
			if n := stops.Load(); n > 1 {
				t.Fatalf("%s: onStop ran %d times", tc.name, n)
			}
		}
		if late != 0 {
			t.Errorf("%s: in %d of %d rounds, onStop had not run exactly %d time(s) when flush returned", tc.name, late, rounds, tc.want)
		}
	}
}

// TestStopWatchContext: the end of the context stops as a signal does;
// after close, nothing does.
func TestStopWatchContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	w := watchStops(ctx, func() { close(stopped) })
	cancel()
	<-stopped
	w.close()

	var stops atomic.Int32
	ctx, cancel = context.WithCancel(context.Background())
	w = watchStops(ctx, func() { stops.Add(1) })
	w.close()
	cancel()
	if stops.Load() != 0 {
		t.Errorf("onStop ran after close")
	}
}

// TestBlockedAtRest: a thread is passed over only when it keeps the
// barrier blocked at rest, not while it runs a handler (every signal
// blocked, the thread a stop signal may be half-way through).
func TestBlockedAtRest(t *testing.T) {
	bit := func(sigs ...syscall.Signal) (m uint64) {
		for _, s := range sigs {
			m |= 1 << (uint(s) - 1)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		mask uint64
		want bool
	}{
		{"nothing blocked", 0, false},
		{"barrier blocked at rest", bit(barrierSignal), true},
		{"barrier and stops blocked at rest", bit(barrierSignal, syscall.SIGINT, syscall.SIGTERM), true},
		{"in a handler: all blocked", ^uint64(0), false},
		{"in a handler: all but the unblockable", ^bit(syscall.SIGKILL, syscall.SIGSTOP), false},
		{"others blocked", bit(syscall.SIGINT, syscall.SIGUSR1), false},
	} {
		if got := blockedAtRest(tc.mask); got != tc.want {
			t.Errorf("%s (%#x): blockedAtRest %v, want %v", tc.name, tc.mask, got, tc.want)
		}
	}
}
