// Package httprange is the source of a record file served over HTTP(S): the
// bytes of one URL read by ranged GETs (RFC 9110 Range requests), as a
// source.Source. Many public datasets are served that way.
//
// A URL's version is its entity tag when the server sends a strong one,
// else its Last-Modified time and length. Every ranged GET asks for that
// version (If-Range) and checks the answer (206, Content-Range, validators):
// a file that changed under an open Object fails reads with
// source.ErrChanged, never bytes of two versions. Every request — each HEAD
// and each GET with its body — ends within Options.Timeout, its attempts
// included: a stalled server costs a read that long, then an error. Each
// attempt is also watched by package netread (Options.Limits): one whose
// server stalls before the budget is spent is abandoned and tried again.
package httprange

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/recfs/recfs/source/netread"
)

// Defaults of Options.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultAttempts    = 3
	DefaultBlockSize   = 1 << 20
	DefaultCacheBytes  = 64 << 20
	defaultConnTimeout = 10 * time.Second
)

// Errors.
var (
	// ErrNotFound reports a URL the server does not have (404, 410).
	ErrNotFound = errors.New("http: not found")
	// ErrNoRanges reports a server that does not serve byte ranges.
	ErrNoRanges = errors.New("http: the server does not serve byte ranges")
)

// IsURL reports whether s is an http:// or https:// URL.
func IsURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// Options configure a Client.
type Options struct {
	// Timeout bounds each request, its attempts and the pauses between
	// them included, and the reading of its body (default 30 s).
	Timeout time.Duration
	// Attempts is how often a request is tried (a failed connection, a
	// 5xx, a cut body) before it fails (default 3).
	Attempts int
	// BlockSize is the unit of ranged GETs and of the cache (default 1 MiB).
	BlockSize int64
	// CacheBytes bounds the cached blocks of each object (default 64 MiB).
	CacheBytes int64
	// Limits bound each attempt (netread.Limits). Zero fields take
	// defaults from Timeout: Connect min(Timeout, 10 s), FirstByte and
	// Idle Timeout/Attempts, Pace Timeout; a negative field is no limit.
	Limits netread.Limits
	// HTTPClient is the client to use (nil: one whose connections are
	// bounded by the timeout); its transport is put under Limits.
	HTTPClient *http.Client
}

// withDefaults fills o's zero fields.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Attempts < 1 {
		o.Attempts = DefaultAttempts
	}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.CacheBytes < o.BlockSize {
		o.CacheBytes = max(DefaultCacheBytes, o.BlockSize)
	}
	ct := min(o.Timeout, defaultConnTimeout)
	perAttempt := o.Timeout / time.Duration(o.Attempts)
	limit(&o.Limits.Connect, ct)
	limit(&o.Limits.FirstByte, perAttempt)
	limit(&o.Limits.Idle, perAttempt)
	limit(&o.Limits.Pace, o.Timeout)
	hc := &http.Client{}
	if o.HTTPClient != nil {
		*hc = *o.HTTPClient
	} else {
		d := &net.Dialer{Timeout: ct, KeepAlive: 30 * time.Second}
		hc.Transport = &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            d.DialContext,
			TLSHandshakeTimeout:    ct,
			ResponseHeaderTimeout:  o.Timeout,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
			DisableCompression:     true, // ranges of the stored bytes, not of an encoding
		}
	}
	hc.Transport = &netread.Transport{Base: hc.Transport, Limits: o.Limits, Name: "http"}
	o.HTTPClient = hc
	return o
}

// limit sets a zero limit to d and a negative one to zero (none).
func limit(l *time.Duration, d time.Duration) {
	switch {
	case *l == 0:
		*l = d
	case *l < 0:
		*l = 0
	}
}

// Client opens URLs.
type Client struct{ o Options }

// NewClient returns a client with o (zero fields take their defaults).
func NewClient(o Options) *Client { return &Client{o: o.withDefaults()} }

// TimeoutError reports a request not done within Options.Timeout.
type TimeoutError struct {
	URL   string
	After time.Duration
	Last  error // the last attempt's error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("http: %s: no answer within %v (last attempt: %v)", e.URL, e.After, e.Last)
}

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Unwrap returns the last attempt's error.
func (e *TimeoutError) Unwrap() error { return e.Last }

// do runs one request (built afresh by mk for each attempt) within the
// timeout, retrying failed connections and what body, which reads the
// answer, says may be retried (a 5xx, a cut body). The request's context
// ends when do returns.
func (c *Client) do(parent context.Context, url string, mk func(ctx context.Context) (*http.Request, error),
	body func(*http.Response) (retry bool, err error)) error {
	ctx, cancel := context.WithTimeout(parent, c.o.Timeout)
	defer cancel()
	var last error
	pause := 100 * time.Millisecond
	for a := 0; a < c.o.Attempts && ctx.Err() == nil; a++ {
		if a > 0 {
			select {
			case <-ctx.Done():
				continue
			case <-time.After(pause):
				pause *= 2
			}
		}
		req, err := mk(ctx)
		if err != nil {
			return err
		}
		resp, err := c.o.HTTPClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		retry, err := body(resp)
		resp.Body.Close()
		if err == nil {
			return nil
		}
		last = err
		if !retry && ctx.Err() == nil {
			return err
		}
	}
	switch {
	case parent.Err() != nil:
		return parent.Err()
	case ctx.Err() != nil:
		return &TimeoutError{URL: url, After: c.o.Timeout, Last: last}
	}
	return last
}
