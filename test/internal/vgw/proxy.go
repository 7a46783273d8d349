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
}

// Recorder is a reverse proxy in front of a Server that records every
// request, so tests can count what a command cost. Point clients at its
// Endpoint (the Host header is kept, so signatures still verify).
type Recorder struct {
	Endpoint string
	mu       sync.Mutex
	reqs     []Request
}

// Recorder starts a recording proxy for the test's lifetime.
func (s *Server) Recorder(t testing.TB) *Recorder {
	t.Helper()
	target, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, Request{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range")})
		rec.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.Endpoint = srv.URL
	return rec
}

// Take returns the requests recorded since the last Take.
func (r *Recorder) Take() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}
