// Package netread bounds the network reads of a source: every attempt of
// an HTTP request is watched phase by phase, and one whose server stalls
// is abandoned (its connection closed) with a *TimeoutError that names
// the limit it passed. The S3 and HTTP range sources put their clients'
// transports under it; retry budgets stay with the sources.
//
// The phases of an attempt: a connection must be ready within
// Limits.Connect; once the request is written, the response must start
// within Limits.FirstByte; no byte of the request or the response may
// then pause for longer than Limits.Idle; and a body must deliver each
// MiB within Limits.Pace of the time its reader waited for it, so that a
// server that drips a byte now and then is cut too. In a body only the
// time the reader spends inside Read counts: a reader busy with what it
// read is not the server's delay.
package netread

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// Limits are the deadlines of each attempt. A zero limit is none.
type Limits struct {
	Connect   time.Duration // until the connection (TCP and TLS) is ready
	FirstByte time.Duration // from the request written to the response's first byte
	Idle      time.Duration // any pause in the request's or the response's bytes
	Pace      time.Duration // time waited in Read for each PaceUnit of a body
}

// PaceUnit is the amount of a body that must arrive within Limits.Pace.
const PaceUnit = 1 << 20

// The limits a TimeoutError names (its Op). OpBudget is a source's own
// bound on a whole request, its attempts included.
const (
	OpConnect   = "connect"
	OpFirstByte = "first byte"
	OpIdle      = "idle"
	OpPace      = "pace"
	OpBudget    = "retry budget"
)

// TimeoutError reports a request abandoned past one of its limits. It does
// not wrap context.DeadlineExceeded: the caller's context did not end.
type TimeoutError struct {
	Name  string        // the message's prefix: the source's protocol ("s3", "http"); "": none
	Op    string        // the limit passed: OpConnect, OpFirstByte, OpIdle, OpPace or OpBudget
	After time.Duration // its value
	// Last is the error of the last attempt when a budget ran out.
	Last string
}

func (e *TimeoutError) Error() string {
	if e.Name != "" {
		return e.Name + ": " + e.message()
	}
	return e.message()
}

func (e *TimeoutError) message() string {
	switch e.Op {
	case OpConnect:
		return fmt.Sprintf("no connection within %v", e.After)
	case OpFirstByte:
		return fmt.Sprintf("no response within %v of the request", e.After)
	case OpIdle:
		return fmt.Sprintf("no bytes for %v", e.After)
	case OpPace:
		return fmt.Sprintf("response slower than 1 MiB in %v", e.After)
	case OpBudget:
		if e.Last != "" {
			return fmt.Sprintf("request not done within its retry budget of %v (last attempt: %s)", e.After, e.Last)
		}
		return fmt.Sprintf("request not done within its retry budget of %v", e.After)
	}
	return fmt.Sprintf("%s timeout after %v", e.Op, e.After)
}

// Timeout reports true: retryers and net callers take it as a timeout.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true: another attempt may succeed.
func (e *TimeoutError) Temporary() bool { return true }

// Transport is an http.RoundTripper that runs each attempt of Base under
// Limits. A response's body carries the watch on until it is read to its
// end or closed; a Read past a limit fails with the *TimeoutError.
type Transport struct {
	Base   http.RoundTripper // nil: http.DefaultTransport
	Limits Limits
	Name   string // the Name of its TimeoutErrors

	clock func() time.Time // nil: time.Now (tests set a fake one)
}

// RoundTrip runs one attempt under a watch.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	w := newWatch(req.Context(), t.Limits, t.Name, t.clock)
	trace := &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { w.enter(OpIdle) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { w.enter(OpFirstByte) },
		GotFirstResponseByte: func() { w.enter(OpIdle) },
	}
	r := req.WithContext(httptrace.WithClientTrace(w.ctx, trace))
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedReader{rc: req.Body, w: w}
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		w.stop()
		if te := w.fired(); te != nil {
			err = te
		}
		return nil, err
	}
	w.enter(OpPace)
	resp.Body = &watchedBody{rc: resp.Body, w: w}
	return resp, nil
}

// watch is the deadline of one attempt: a timer that, when the current
// phase's time is up, cancels the attempt's context with a *TimeoutError.
// Progress is recorded without touching the timer; the timer re-checks
// when it fires, and is armed again when a Read starts after it found
// none waiting.
type watch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	l      Limits
	name   string
	timer  *time.Timer
	now    func() time.Time

	mu    sync.Mutex
	op    string    // current phase
	start time.Time // when the phase began
	armed bool      // the timer will check again
	done  bool
	err   *TimeoutError

	last      atomic.Int64 // unix nanoseconds of the last request byte sent
	readStart atomic.Int64 // unix nanoseconds a body Read began waiting (0: none)
	waited    atomic.Int64 // nanoseconds waited in Reads since the current MiB began
	sinceMark atomic.Int64 // body bytes since the current MiB began
}

func newWatch(parent context.Context, l Limits, name string, clock func() time.Time) *watch {
	if clock == nil {
		clock = time.Now
	}
	w := &watch{l: l, name: name, now: clock, op: OpConnect}
	w.start = w.now()
	w.ctx, w.cancel = context.WithCancelCause(parent)
	w.last.Store(w.start.UnixNano())
	w.timer = time.AfterFunc(time.Hour, w.check)
	w.mu.Lock()
	w.arm(w.start)
	w.mu.Unlock()
	return w
}

// enter starts a phase (OpConnect, OpFirstByte, OpIdle or OpPace).
func (w *watch) enter(op string) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.op, w.start = op, now
	w.last.Store(now.UnixNano())
	w.arm(now)
}

// arm sets the timer for the current phase's deadline, if it has one now.
// Called with mu held.
func (w *watch) arm(now time.Time) {
	due, ok := w.due()
	w.armed = ok
	if ok {
		w.timer.Reset(due.Sub(now))
	} else {
		w.timer.Stop()
	}
}

// sent records n request bytes sent.
func (w *watch) sent(n int) {
	if n > 0 {
		w.last.Store(w.now().UnixNano())
	}
}

// beginRead records that the body's reader waits for bytes.
func (w *watch) beginRead() {
	now := w.now()
	w.readStart.Store(now.UnixNano())
	w.mu.Lock()
	if !w.armed && !w.done {
		w.arm(now)
	}
	w.mu.Unlock()
}

// endRead records that a body Read returned n bytes.
func (w *watch) endRead(n int) {
	now := w.now().UnixNano()
	if rs := w.readStart.Swap(0); rs != 0 {
		w.waited.Add(now - rs)
	}
	if w.sinceMark.Add(int64(n)) >= PaceUnit {
		w.sinceMark.Store(0)
		w.waited.Store(0)
	}
}

// deadline is t+d, or none when d is zero.
func deadline(t time.Time, d time.Duration) (time.Time, bool) {
	return t.Add(d), d > 0
}

// due is when the current phase fails unless more happens; ok is false
// when nothing is being waited for (a body whose reader is not in Read)
// or the phase has no limit. Called with mu held.
func (w *watch) due() (time.Time, bool) {
	switch w.op {
	case OpConnect:
		return deadline(w.start, w.l.Connect)
	case OpFirstByte:
		return deadline(w.start, w.l.FirstByte)
	case OpIdle:
		return deadline(time.Unix(0, w.last.Load()), w.l.Idle)
	case OpPace:
		rs := w.readStart.Load()
		if rs == 0 {
			return time.Time{}, false
		}
		t := time.Unix(0, rs)
		idle, iok := deadline(t, w.l.Idle)
		// The pace budget left may be negative (a Read that overran it
		// returned before the timer ran): the deadline is then already
		// past, never absent.
		pace, pok := t.Add(w.l.Pace-time.Duration(w.waited.Load())), w.l.Pace > 0
		if pok && (!iok || pace.Before(idle)) {
			return pace, true
		}
		return idle, iok
	}
	return time.Time{}, false
}

// check runs when the timer fires: it fails the attempt if its phase is
// overdue, else waits again.
func (w *watch) check() {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	due, ok := w.due()
	if !ok || now.Before(due) {
		w.arm(now)
		return
	}
	op, after := w.op, w.l.Idle
	switch op {
	case OpConnect:
		after = w.l.Connect
	case OpFirstByte:
		after = w.l.FirstByte
	case OpPace:
		op = OpIdle
		if rs := w.readStart.Load(); rs != 0 && (w.l.Idle <= 0 || now.Sub(time.Unix(0, rs)) < w.l.Idle) {
			op, after = OpPace, w.l.Pace
		}
	}
	w.err = &TimeoutError{Name: w.name, Op: op, After: after}
	w.done = true
	w.cancel(w.err)
}

// fired returns the timeout that ended the attempt, or nil.
func (w *watch) fired() *TimeoutError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stop ends the watch (the attempt finished or was given up by its caller)
// and releases its context.
func (w *watch) stop() {
	w.mu.Lock()
	w.done = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// watchedReader is a request body whose reads count as progress.
type watchedReader struct {
	rc io.ReadCloser
	w  *watch
}

func (r *watchedReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.w.sent(n)
	return n, err
}

func (r *watchedReader) Close() error { return r.rc.Close() }

// watchedBody is a response body under its attempt's watch.
type watchedBody struct {
	rc   io.ReadCloser
	w    *watch
	once sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.w.beginRead()
	n, err := b.rc.Read(p)
	b.w.endRead(n)
	if err != nil {
		if te := b.w.fired(); te != nil {
			return n, te
		}
		if err == io.EOF {
			b.finish()
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *watchedBody) finish() { b.once.Do(b.w.stop) }
