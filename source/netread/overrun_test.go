package netread

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPaceAfterOverrun: a Read that returns after the pace budget of its
// MiB ran out, before the timer's callback got to check it, leaves the
// budget spent; the next Read of the same MiB must still be cut at once by
// the pace limit, not wait for the idle limit.
func TestPaceAfterOverrun(t *testing.T) {
	w := newWatch(context.Background(), Limits{Idle: time.Hour, Pace: 100 * time.Millisecond}, "x", nil)
	defer w.stop()
	w.enter(OpPace)

	// Hold mu so the timer's callback cannot run while the overrun is staged.
	w.beginRead()
	w.mu.Lock()
	w.readStart.Store(time.Now().Add(-150 * time.Millisecond).UnixNano())
	w.endRead(1)
	w.mu.Unlock()

	w.beginRead()
	select {
	case <-w.ctx.Done():
	case <-time.After(late):
		t.Fatalf("no timeout %v after the pace budget was overrun", late)
	}
	var te *TimeoutError
	if err := context.Cause(w.ctx); !errors.As(err, &te) || te.Op != OpPace {
		t.Fatalf("attempt ended with %v, want a TimeoutError for %q", err, OpPace)
	}
}
