package netread

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// fakeClock is a watch's clock that moves only when a test says so. The
// watch's timer stays real: a test calls check itself, as the timer
// would when the time it was set for comes.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ended reports the TimeoutError that ended w's attempt, or nil while it
// runs or when it ended otherwise.
func ended(w *watch) *TimeoutError {
	var te *TimeoutError
	if errors.As(context.Cause(w.ctx), &te) {
		return te
	}
	return nil
}

// pending reports whether w's timer is still set, and stops it.
func pending(w *watch) bool { return w.timer.Stop() }

// read is one body Read on w that waits d for its byte.
func read(w *watch, c *fakeClock, d time.Duration) {
	w.beginRead()
	c.Add(d)
	w.endRead(1)
}

// TestOutsideReadNotCounted: a body's reader may keep what it read for
// as long as it likes between Reads; only the time it waits inside Read
// counts against Idle and Pace, and that time still does.
func TestOutsideReadNotCounted(t *testing.T) {
	t.Parallel()
	const limit = 100 * time.Millisecond
	for _, c := range []struct {
		name   string
		limits Limits
		want   string
	}{
		{"idle", Limits{Idle: limit}, OpIdle},
		{"pace", Limits{Pace: limit}, OpPace},
		{"pace under idle", Limits{Idle: limit, Pace: limit}, OpIdle},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			w := newWatch(context.Background(), c.limits, "x", clk.Now)
			defer w.stop()
			w.enter(OpPace)
			for i := 0; i < 3; i++ {
				read(w, clk, limit*3/10) // 90% of the pace budget in all
				clk.Add(time.Hour)       // the reader is busy elsewhere
				w.check()
				if te := ended(w); te != nil {
					t.Fatalf("read %d: cut for time spent outside Read: %v", i, te)
				}
			}
			// Time inside Read counts: the next wait passes the limit.
			w.beginRead()
			clk.Add(limit + time.Millisecond)
			w.check()
			if te := ended(w); te == nil || te.Op != c.want {
				t.Fatalf("a Read waiting past the limit ended with %v, want %q", context.Cause(w.ctx), c.want)
			}
		})
	}
}

// TestZeroLimitsNone: a zero limit sets no deadline for its phase, not a
// deadline at once; the other limits keep theirs.
func TestZeroLimitsNone(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	t.Run("all", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		w := newWatch(context.Background(), Limits{}, "x", clk.Now)
		defer w.stop()
		for _, op := range []string{OpConnect, OpFirstByte, OpIdle, OpPace} {
			w.enter(op)
			if op == OpPace {
				w.beginRead()
			}
			if pending(w) {
				t.Errorf("%s: a timer is set with no limit", op)
			}
			clk.Add(day)
			w.check()
			if te := ended(w); te != nil {
				t.Fatalf("%s: cut with no limit: %v", op, te)
			}
		}
	})
	for _, c := range []struct {
		op     string
		limits Limits
	}{
		{OpConnect, Limits{FirstByte: time.Minute, Idle: time.Minute, Pace: time.Minute}},
		{OpFirstByte, Limits{Connect: time.Minute, Idle: time.Minute, Pace: time.Minute}},
		{OpIdle, Limits{Connect: time.Minute, FirstByte: time.Minute, Pace: time.Minute}},
	} {
		t.Run("only "+c.op, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			w := newWatch(context.Background(), c.limits, "x", clk.Now)
			defer w.stop()
			w.enter(c.op)
			clk.Add(day)
			w.check()
			if te := ended(w); te != nil {
				t.Fatalf("cut with no %s limit: %v", c.op, te)
			}
		})
	}
	t.Run("only pace", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		w := newWatch(context.Background(), Limits{Idle: time.Minute}, "x", clk.Now)
		defer w.stop()
		w.enter(OpPace)
		for i := 0; i < 100; i++ { // 100 bytes in 83 minutes, each within Idle
			read(w, clk, 50*time.Second)
			w.check()
		}
		if te := ended(w); te != nil {
			t.Fatalf("cut with no pace limit: %v", te)
		}
		w.beginRead()
		clk.Add(time.Minute + time.Millisecond)
		w.check()
		if te := ended(w); te == nil || te.Op != OpIdle {
			t.Fatalf("a Read idle past Idle ended with %v, want %q", context.Cause(w.ctx), OpIdle)
		}
	})
}

// TestWatchEnds: a body read to its end or closed (whether read, unread or
// with a Read waiting) ends its watch: no timer is left set, the attempt's
// context is released as canceled, and a timer that fires late ends
// nothing with a timeout.
func TestWatchEnds(t *testing.T) {
	t.Parallel()
	srv := stallingServer(t, func(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
		if !headersThen(w, 1000) {
			return
		}
		if r.URL.Path == "/stall" {
			wait(r, done)
		}
	})
	limits := Limits{Connect: time.Minute, FirstByte: time.Minute, Idle: time.Minute, Pace: time.Minute}
	for _, c := range []struct {
		name string
		path string
		end  func(t *testing.T, b *watchedBody)
	}{
		{"EOF", "/", func(t *testing.T, b *watchedBody) {
			if n, err := io.Copy(io.Discard, b); n != 1000 || err != nil {
				t.Fatalf("read %d bytes, %v", n, err)
			}
		}},
		{"close unread", "/", func(t *testing.T, b *watchedBody) { b.Close() }},
		{"close after a read", "/", func(t *testing.T, b *watchedBody) {
			if _, err := b.Read(make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			b.Close()
		}},
		{"close during a read", "/stall", func(t *testing.T, b *watchedBody) {
			if _, err := io.ReadFull(b, make([]byte, 1000)); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := b.Read(make([]byte, 10))
				errc <- err
			}()
			for b.w.readStart.Load() == 0 { // until the Read waits
				time.Sleep(time.Millisecond)
			}
			b.Close()
			if err := <-errc; err == nil {
				t.Fatal("a Read on a closed body returned no error")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			base := &http.Transport{}
			t.Cleanup(base.CloseIdleConnections)
			client := &http.Client{Transport: &Transport{Base: base, Limits: limits, Name: "x", clock: clk.Now}}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := resp.Body.(*watchedBody)
			c.end(t, b)
			w := b.w
			if pending(w) {
				t.Error("a timer is still set after the body ended")
			}
			select {
			case <-w.ctx.Done():
			default:
				t.Fatal("the attempt's context is not released")
			}
			clk.Add(24 * time.Hour)
			w.check() // a timer that fired late
			if te := w.fired(); te != nil {
				t.Errorf("ended watch cut late: %v", te)
			}
			if cause := context.Cause(w.ctx); cause != context.Canceled {
				t.Errorf("attempt ended with %v, want context.Canceled", cause)
			}
			resp.Body.Close()
		})
	}
}

// TestStoppedWatchQuiet: a watch stopped with a deadline pending (a
// Read waiting, a response not yet begun) is not cut by its timer firing
// after the deadline.
func TestStoppedWatchQuiet(t *testing.T) {
	t.Parallel()
	for _, op := range []string{OpConnect, OpFirstByte, OpIdle, OpPace} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			w := newWatch(context.Background(), Limits{Connect: time.Second, FirstByte: time.Second, Idle: time.Second, Pace: time.Second}, "x", clk.Now)
			w.enter(op)
			if op == OpPace {
				w.beginRead()
			}
			w.stop()
			if pending(w) {
				t.Error("a timer is still set after stop")
			}
			clk.Add(time.Hour)
			w.check()
			if te := w.fired(); te != nil {
				t.Fatalf("stopped watch cut: %v", te)
			}
		})
	}
}
