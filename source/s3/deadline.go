package s3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// Deadlines of every request a Client makes. Each attempt of a request is
// watched phase by phase: a connection must be ready within Connect, the
// response must start within FirstByte of the request being sent, and
// neither the request's nor the response's bytes may pause for longer than
// Idle. A body must also deliver each MiB within Budget, so that a server
// that drips a byte now and then is cut too. An attempt past a deadline is
// abandoned (its connection closed) and fails with a *TimeoutError.
//
// The attempts of one request, and the pauses between them, fit in Budget.

// TimeoutError reports a request abandoned past one of its deadlines. It
// does not wrap context.DeadlineExceeded: the caller's context did not end.
type TimeoutError struct {
	Op    string        // what was late: "connect", "first byte", "idle", "pace", "retry budget"
	After time.Duration // the deadline that passed
	// Last is the error of the last attempt when the retry budget ran out.
	Last string
}

func (e *TimeoutError) Error() string {
	switch e.Op {
	case opConnect:
		return fmt.Sprintf("s3: no connection within %v", e.After)
	case opFirstByte:
		return fmt.Sprintf("s3: no response within %v of the request", e.After)
	case opIdle:
		return fmt.Sprintf("s3: no bytes for %v", e.After)
	case opPace:
		return fmt.Sprintf("s3: response slower than 1 MiB in %v", e.After)
	case opBudget:
		if e.Last != "" {
			return fmt.Sprintf("s3: request not done within its retry budget of %v (last attempt: %s)", e.After, e.Last)
		}
		return fmt.Sprintf("s3: request not done within its retry budget of %v", e.After)
	}
	return fmt.Sprintf("s3: %s timeout after %v", e.Op, e.After)
}

// Timeout reports true: the SDK's retryer and net callers take it as a
// timeout.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true: another attempt may succeed.
func (e *TimeoutError) Temporary() bool { return true }

const (
	opConnect   = "connect"
	opFirstByte = "first byte"
	opIdle      = "idle"
	opPace      = "pace"
	opBudget    = "retry budget"
)

// paceUnit is the amount of a body that must arrive within the budget.
const paceUnit = 1 << 20

// maxMetaBody bounds a response that is not an object's bytes (a listing
// page, an error document): a page of 1,000 keys of 1,024 bytes is about
// 1.5 MB.
const maxMetaBody = 8 << 20

// ErrResponseTooLarge reports a listing page or error document larger than
// any store sends.
var ErrResponseTooLarge = errors.New("s3: response larger than 8 MiB")

// deadlineTransport is an http.RoundTripper that watches every attempt
// with the client's deadlines.
type deadlineTransport struct {
	base http.RoundTripper
	o    *Options
}

// newHTTPClient is the HTTP client of a client: o.HTTPClient's (or one
// of ours, which also bounds dialing and TLS) wrapped in the deadlines.
func newHTTPClient(o *Options) *http.Client {
	var base http.RoundTripper
	c := &http.Client{}
	if o.HTTPClient != nil {
		*c = *o.HTTPClient
		base = o.HTTPClient.Transport
	}
	if base == nil {
		d := &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}
		base = &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            d.DialContext,
			TLSHandshakeTimeout:    o.ConnectTimeout,
			ResponseHeaderTimeout:  o.FirstByteTimeout + o.IdleTimeout,
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxResponseHeaderBytes: 1 << 20,
			// HTTP/1.1 only: an abandoned attempt takes its connection
			// with it, and the next one gets another.
			TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
		}
	}
	c.Transport = &deadlineTransport{base: base, o: o}
	c.Timeout = 0 // bodies are streamed; the watch bounds them
	return c
}

// RoundTrip runs one attempt under a watch; the response body carries it
// on until the body is read or closed.
func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := newWatch(req.Context(), t.o)
	trace := &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { w.enter(opIdle) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { w.enter(opFirstByte) },
		GotFirstResponseByte: func() { w.enter(opIdle) },
	}
	r := req.WithContext(httptrace.WithClientTrace(w.ctx, trace))
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedReader{rc: req.Body, w: w}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		w.stop()
		if te := w.fired(); te != nil {
			err = te
		}
		noteAttempt(req.Context(), err.Error())
		return nil, err
	}
	if resp.StatusCode >= 500 {
		noteAttempt(req.Context(), resp.Status)
	}
	limit := int64(-1)
	object := req.Method == http.MethodGet && resp.StatusCode/100 == 2 && !req.URL.Query().Has("list-type")
	if !object && req.Method != http.MethodHead {
		limit = maxMetaBody
		if resp.ContentLength > limit {
			resp.Body.Close()
			w.stop()
			return nil, fmt.Errorf("%s %s: %w (Content-Length %d)", req.Method, req.URL.Path, ErrResponseTooLarge, resp.ContentLength)
		}
	}
	w.enter(opPace)
	resp.Body = &watchedBody{rc: resp.Body, w: w, left: limit}
	return resp, nil
}

// watch is the deadline of one attempt: a timer that, when the current
// phase's time is up, cancels the attempt's context with a *TimeoutError.
// In the body phase only the time its reader spends waiting inside Read
// counts (a reader busy with what it read is not the server's delay):
// the idle deadline runs from the start of a Read, and the pace deadline
// from the time waited since the start of the current MiB. Progress is
// recorded without touching the timer; the timer re-checks when it fires,
// and is armed again when a Read starts after it found none waiting.
type watch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	o      *Options
	timer  *time.Timer

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

func newWatch(parent context.Context, o *Options) *watch {
	w := &watch{o: o, op: opConnect, start: time.Now(), armed: true}
	w.ctx, w.cancel = context.WithCancelCause(parent)
	w.last.Store(w.start.UnixNano())
	w.timer = time.AfterFunc(o.ConnectTimeout, w.check)
	return w
}

// enter starts a phase (opConnect, opFirstByte, opIdle or opPace).
func (w *watch) enter(op string) {
	now := time.Now()
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
	}
}

// sent records n request bytes sent.
func (w *watch) sent(n int) {
	if n > 0 {
		w.last.Store(time.Now().UnixNano())
	}
}

// beginRead records that the body's reader waits for bytes.
func (w *watch) beginRead() {
	now := time.Now()
	w.readStart.Store(now.UnixNano())
	w.mu.Lock()
	if !w.armed && !w.done {
		w.arm(now)
	}
	w.mu.Unlock()
}

// endRead records that a body Read returned n bytes.
func (w *watch) endRead(n int) {
	now := time.Now().UnixNano()
	if rs := w.readStart.Swap(0); rs != 0 {
		w.waited.Add(now - rs)
	}
	if w.sinceMark.Add(int64(n)) >= paceUnit {
		w.sinceMark.Store(0)
		w.waited.Store(0)
	}
}

// due is when the current phase fails unless more happens; ok is false
// when nothing is being waited for (a body whose reader is not in Read).
// Called with mu held.
func (w *watch) due() (time.Time, bool) {
	o := w.o
	switch w.op {
	case opConnect:
		return w.start.Add(o.ConnectTimeout), true
	case opFirstByte:
		return w.start.Add(o.FirstByteTimeout), true
	case opIdle:
		return time.Unix(0, w.last.Load()).Add(o.IdleTimeout), true
	case opPace:
		rs := w.readStart.Load()
		if rs == 0 {
			return time.Time{}, false
		}
		t := time.Unix(0, rs)
		idle := t.Add(o.IdleTimeout)
		pace := t.Add(o.RetryBudget - time.Duration(w.waited.Load()))
		if pace.Before(idle) {
			return pace, true
		}
		return idle, true
	}
	return time.Time{}, false
}

// check runs when the timer fires: it fails the attempt if its phase is
// overdue, else waits again.
func (w *watch) check() {
	now := time.Now()
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
	op, after := w.op, w.o.IdleTimeout
	switch op {
	case opConnect:
		after = w.o.ConnectTimeout
	case opFirstByte:
		after = w.o.FirstByteTimeout
	case opPace:
		op = opIdle
		if rs := w.readStart.Load(); rs != 0 && now.Sub(time.Unix(0, rs)) < w.o.IdleTimeout {
			op, after = opPace, w.o.RetryBudget
		}
	}
	w.err = &TimeoutError{Op: op, After: after}
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

// watchedBody is a response body under its attempt's watch; left is how
// many more bytes it may give (-1: no bound).
type watchedBody struct {
	rc   io.ReadCloser
	w    *watch
	left int64
	once sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.left >= 0 && int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	b.w.beginRead()
	n, err := b.rc.Read(p)
	b.w.endRead(n)
	if b.left >= 0 {
		if int64(n) > b.left {
			b.finish()
			return 0, ErrResponseTooLarge
		}
		b.left -= int64(n)
	}
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
