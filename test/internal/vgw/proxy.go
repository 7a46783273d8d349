package vgw

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Request is one request a Recorder passed on.
type Request struct {
	Method, Path, Range string
	// Status is the response's status code, Bytes the body bytes the
	// proxy sent back to the client.
	Status int
	Bytes  int64
}

// Recorder is a reverse proxy in front of a Server that records every
// request, so tests can count what a command cost. Point clients at its
// Endpoint (the Host header is kept, so signatures still verify).
type Recorder struct {
	Endpoint string
	mu       sync.Mutex
	reqs     []*Request
	hold     func(*http.Request) bool
	srv      *httptest.Server
}

// Hold makes the proxy call f with every request before passing it on; f
// may block (a test pacing the server's answers). When f returns false the
// request is answered 503 Service Unavailable instead.
func (r *Recorder) Hold(f func(*http.Request) bool) {
	r.mu.Lock()
	r.hold = f
	r.mu.Unlock()
}

// StartRecorder starts a recording proxy in front of s; the caller must
// Close it.
func (s *Server) StartRecorder() (*Recorder, error) {
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, err
	}
	rec := &Recorder{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Recorded before it is passed on (a client that saw its answer
		// finds it in Take), completed with the response's size after.
		q := &Request{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range")}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, q)
		hold := rec.hold
		rec.mu.Unlock()
		if hold != nil && !hold(r) {
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
		cw := &countingWriter{ResponseWriter: w, rec: rec, q: q}
		rp.ServeHTTP(cw, r)
	}))
	rec.Endpoint = rec.srv.URL
	return rec, nil
}

// Close stops the proxy.
func (r *Recorder) Close() { r.srv.Close() }

// Recorder starts a recording proxy for the test's lifetime.
func (s *Server) Recorder(t testing.TB) *Recorder {
	t.Helper()
	rec, err := s.StartRecorder()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	return rec
}

// Take returns the requests recorded since the last Take.
func (r *Recorder) Take() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Request, len(r.reqs))
	for i, q := range r.reqs {
		out[i] = *q
	}
	r.reqs = nil
	return out
}

// countingWriter fills in its Request's status and body bytes as the
// response goes out.
type countingWriter struct {
	http.ResponseWriter
	rec *Recorder
	q   *Request
}

func (c *countingWriter) WriteHeader(code int) {
	c.rec.mu.Lock()
	c.q.Status = code
	c.rec.mu.Unlock()
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.rec.mu.Lock()
	if c.q.Status == 0 {
		c.q.Status = http.StatusOK // implicit WriteHeader
	}
	c.rec.mu.Unlock()
	n, err := c.ResponseWriter.Write(p)
	c.rec.mu.Lock()
	c.q.Bytes += int64(n)
	c.rec.mu.Unlock()
	return n, err
}

// Flush passes flushes on (the reverse proxy flushes streamed bodies).
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
