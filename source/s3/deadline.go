package s3

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/recfs/recfs/source/netread"
)

// Deadlines of every request a Client makes. Each attempt of a request is
// watched phase by phase (package netread): a connection must be ready
// within Connect, the response must start within FirstByte of the request
// being sent, and neither the request's nor the response's bytes may pause
// for longer than Idle. A body must also deliver each MiB within Budget,
// so that a server that drips a byte now and then is cut too. An attempt
// past a deadline is abandoned (its connection closed) and fails with a
// *TimeoutError.
//
// The attempts of one request, and the pauses between them, fit in Budget.

// TimeoutError reports a request abandoned past one of its deadlines, or
// not done within its retry budget (Op "retry budget").
type TimeoutError = netread.TimeoutError

const (
	opIdle   = netread.OpIdle
	opBudget = netread.OpBudget
)

// netName is the Name of the client's TimeoutErrors.
const netName = "s3"

// budgetTimeout is the error of a request not done within its retry
// budget; last is the last attempt's error, if known.
func budgetTimeout(after time.Duration, last string) *TimeoutError {
	return &TimeoutError{Name: netName, Op: opBudget, After: after, Last: last}
}

// paceUnit is the amount of a body that must arrive within the budget.
const paceUnit = netread.PaceUnit

// maxMetaBody bounds a response that is not an object's bytes (a listing
// page, an error document): a page of 1,000 keys of 1,024 bytes is about
// 1.5 MB.
const maxMetaBody = 8 << 20

// ErrResponseTooLarge reports a listing page or error document larger than
// any store sends.
var ErrResponseTooLarge = errors.New("s3: response larger than 8 MiB")

// limits are the per-attempt deadlines of o.
func (o *Options) limits() netread.Limits {
	return netread.Limits{Connect: o.ConnectTimeout, FirstByte: o.FirstByteTimeout, Idle: o.IdleTimeout, Pace: o.RetryBudget}
}

// newHTTPClient is the HTTP client of a client: o.HTTPClient's (or one
// of ours, which also bounds dialing and TLS) under the deadlines.
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
	c.Transport = &noteTransport{base: &netread.Transport{Base: base, Limits: o.limits(), Name: netName}}
	c.Timeout = 0 // bodies are streamed; the watch bounds them
	return c
}

// noteTransport notes why an attempt failed (for the retry budget's
// error) and bounds the bodies that are not an object's bytes.
type noteTransport struct{ base http.RoundTripper }

func (t *noteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		noteAttempt(req.Context(), err.Error())
		return nil, err
	}
	if resp.StatusCode >= 500 {
		noteAttempt(req.Context(), resp.Status)
	}
	object := req.Method == http.MethodGet && resp.StatusCode/100 == 2 && !req.URL.Query().Has("list-type")
	if object || req.Method == http.MethodHead {
		return resp, nil
	}
	if resp.ContentLength > maxMetaBody {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %w (Content-Length %d)", req.Method, req.URL.Path, ErrResponseTooLarge, resp.ContentLength)
	}
	resp.Body = &boundedBody{rc: resp.Body, left: maxMetaBody}
	return resp, nil
}

// boundedBody gives at most left more bytes, then fails with
// ErrResponseTooLarge and closes its body.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
	once sync.Once
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		b.Close()
		return 0, ErrResponseTooLarge
	}
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error {
	err := error(nil)
	b.once.Do(func() { err = b.rc.Close() })
	return err
}
