// Package hs3 is a hostile S3-like server for tests: a path-style endpoint
// on 127.0.0.1 that answers HEAD, ranged GET (with If-Match),
// ListObjectsV2 and PUT from objects held in memory, checks no signature,
// records every request with the connection it came on and the body
// bytes sent, and lets a test make GETs stall (before the headers, or
// after some body bytes), drip, or fail, and listings lie (pages that
// never end, repeated tokens, keys listed twice, keys outside the prefix).
// Stalled answers end when the client gives up on them or the server
// closes.
package hs3

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bucket is the one bucket the server has.
const Bucket = "b"

// Request is one request the server got.
type Request struct {
	Method string
	Key    string // the object key ("" for a listing)
	List   bool   // a ListObjectsV2
	Prefix string // a listing's prefix
	Token  string // a listing's continuation token
	Range  string
	// MaxKeys is a listing's max-keys (0: none given).
	MaxKeys int
	Conn    int64 // the connection's number (1, 2, ... in order of accept)
	Status  int   // the status sent (0: none, the answer stalled)
	Sent    int64 // body bytes sent
	Start   time.Time
}

// Behavior is what an OnObject hook makes of one HEAD or GET of an object
// (a HEAD only stalls or fails).
type Behavior struct {
	// StallHeaders sends nothing at all.
	StallHeaders bool
	// NoLength sends the body without a Content-Length (chunked).
	NoLength bool
	// StallAfter > 0 sends the headers and this many body bytes, then
	// nothing.
	StallAfter int64
	// Drip > 0 sends the body one byte at a time, Drip apart.
	Drip time.Duration
	// Status, when set, answers with this error status (500, 503...).
	Status int
}

// Page is one ListObjectsV2 answer; a ListHook may change it.
type Page struct {
	Prefix    string
	Keys      []string // object keys (their size is the object's, 0 if none)
	Prefixes  []string // common prefixes, ending in "/"
	Truncated bool
	NextToken string
}

// Server is one running hostile server.
type Server struct {
	URL string // http://127.0.0.1:port

	srv   *httptest.Server
	quit  chan struct{}
	conns atomic.Int64

	mu      sync.Mutex
	objects map[string]object
	reqs    []*Request
	objHook func(r *Request) Behavior
	lstHook func(r *Request, p *Page)
}

// object is stored bytes, or size zeros made on the fly (a huge object).
type object struct {
	data  []byte
	zeros int64
	etag  string
}

func (o object) size() int64 {
	if o.data != nil {
		return int64(len(o.data))
	}
	return o.zeros
}

type connKey struct{}

// Start runs a server for the test's lifetime.
func Start(t testing.TB) *Server {
	s := &Server{quit: make(chan struct{}), objects: map[string]object{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, s.conns.Add(1))
	}
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close ends every stalled answer and stops the server. It may be called
// more than once.
func (s *Server) Close() {
	select {
	case <-s.quit:
		return
	default:
	}
	close(s.quit)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Env is the environment a recfs process needs to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=AKIDHOSTILE", "AWS_SECRET_ACCESS_KEY=hostile", "AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL=" + s.URL, "AWS_ENDPOINT_URL_S3=", "AWS_PROFILE=", "AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true"}
}

// URLOf is the s3:// URL of key.
func URLOf(key string) string { return "s3://" + Bucket + "/" + key }

// Put stores data as key.
func (s *Server) Put(key string, data []byte) {
	sum := md5.Sum(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{data: data, etag: `"` + hex.EncodeToString(sum[:]) + `"`}
}

// PutZeros stores an object of size zero bytes, made as it is sent.
func (s *Server) PutZeros(key string, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{zeros: size, etag: fmt.Sprintf(`"zeros-%d"`, size)}
}

// OnObject sets what HEADs and GETs of objects do (nil: answer them).
func (s *Server) OnObject(h func(r *Request) Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objHook = h
}

// OnList sets a hook that may change every listing page before it is sent.
func (s *Server) OnList(h func(r *Request, p *Page)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lstHook = h
}

// Requests returns a copy of every request so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
		out[i].Sent = atomic.LoadInt64(&r.Sent)
	}
	return out
}

// Count returns how many requests so far match.
func (s *Server) Count(match func(r Request) bool) int {
	n := 0
	for _, r := range s.Requests() {
		if match(r) {
			n++
		}
	}
	return n
}

// IsGet matches a GET of key.
func IsGet(key string) func(Request) bool {
	return func(r Request) bool { return r.Method == http.MethodGet && !r.List && r.Key == key }
}

// IsList matches a listing.
func IsList(r Request) bool { return r.List }

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(hr.URL.Path, "/"), "/")
	q := hr.URL.Query()
	r := &Request{Method: hr.Method, Key: key, Range: hr.Header.Get("Range"), Start: time.Now(),
		List: hr.Method == http.MethodGet && q.Has("list-type"), Prefix: q.Get("prefix"), Token: q.Get("continuation-token")}
	r.Conn, _ = hr.Context().Value(connKey{}).(int64)
	r.MaxKeys, _ = strconv.Atoi(q.Get("max-keys"))
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	obj, ok := s.objects[key]
	objHook, lstHook := s.objHook, s.lstHook
	s.mu.Unlock()
	cw := &countingWriter{ResponseWriter: w, r: r, s: s}
	var b Behavior
	if objHook != nil && !r.List && (hr.Method == http.MethodGet || hr.Method == http.MethodHead) {
		b = objHook(r)
	}
	switch {
	case bucket != Bucket:
		s.fail(cw, http.StatusNotFound, "NoSuchBucket")
	case r.List:
		s.list(cw, hr, r, lstHook)
	case hr.Method == http.MethodPut:
		data, err := io.ReadAll(hr.Body)
		if err != nil {
			return
		}
		s.Put(key, data)
		s.mu.Lock()
		cw.Header().Set("ETag", s.objects[key].etag)
		s.mu.Unlock()
		cw.WriteHeader(http.StatusOK)
	case b.StallHeaders:
		s.wait(hr)
	case b.Status != 0:
		s.fail(cw, b.Status, "InternalError")
	case !ok:
		s.fail(cw, http.StatusNotFound, "NoSuchKey")
	case hr.Method == http.MethodHead:
		cw.Header().Set("ETag", obj.etag)
		cw.Header().Set("Content-Length", strconv.FormatInt(obj.size(), 10))
		cw.Header().Set("Last-Modified", "Wed, 01 Jan 2025 00:00:00 GMT")
		cw.WriteHeader(http.StatusOK)
	case hr.Method == http.MethodGet:
		s.get(cw, hr, obj, b)
	default:
		s.fail(cw, http.StatusMethodNotAllowed, "MethodNotAllowed")
	}
}

// wait holds an answer until the client leaves or the server closes.
func (s *Server) wait(hr *http.Request) {
	select {
	case <-hr.Context().Done():
	case <-s.quit:
	}
}

func (s *Server) fail(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}

func (s *Server) get(w *countingWriter, hr *http.Request, obj object, b Behavior) {
	if m := hr.Header.Get("If-Match"); m != "" && m != obj.etag {
		s.fail(w, http.StatusPreconditionFailed, "PreconditionFailed")
		return
	}
	size := obj.size()
	start, end, status := int64(0), size, http.StatusOK
	if rg := hr.Header.Get("Range"); rg != "" {
		a, z, ok := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
		lo, err1 := strconv.ParseInt(a, 10, 64)
		hi, err2 := strconv.ParseInt(z, 10, 64)
		if !ok || err1 != nil || err2 != nil || lo >= size || hi < lo {
			s.fail(w, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
			return
		}
		start, end, status = lo, min(hi+1, size), http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end-1, size))
	}
	w.Header().Set("ETag", obj.etag)
	if !b.NoLength {
		w.Header().Set("Content-Length", strconv.FormatInt(end-start, 10))
	}
	w.Header().Set("Last-Modified", "Wed, 01 Jan 2025 00:00:00 GMT")
	w.WriteHeader(status)
	f := w.ResponseWriter.(http.Flusher)
	zeros := make([]byte, 64<<10)
	send := func(n int64) bool { // sends the next n bytes
		for n > 0 {
			k := min(n, 64<<10)
			chunk := zeros[:k]
			if obj.data != nil {
				chunk = obj.data[start : start+k]
			}
			if _, err := w.Write(chunk); err != nil {
				return false
			}
			start += k
			n -= k
		}
		f.Flush()
		return true
	}
	switch {
	case b.StallAfter > 0:
		if send(min(b.StallAfter, end-start)) {
			s.wait(hr)
		}
	case b.Drip > 0:
		t := time.NewTicker(b.Drip)
		defer t.Stop()
		for start < end && send(1) {
			select {
			case <-t.C:
			case <-hr.Context().Done():
				return
			case <-s.quit:
				return
			}
		}
	default:
		send(end - start)
	}
}

// list answers ListObjectsV2 from the objects (delimiter "/" or none;
// max-keys, default 1,000; the continuation token is the last name sent),
// then lets the hook change the page.
func (s *Server) list(w http.ResponseWriter, hr *http.Request, r *Request, hook func(*Request, *Page)) {
	q := hr.URL.Query()
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	max := 1000
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m > 0 && m < max {
		max = m
	}
	s.mu.Lock()
	names := map[string]bool{} // key or common prefix → is a prefix
	sizes, etags := map[string]int64{}, map[string]string{}
	for k, o := range s.objects {
		sizes[k], etags[k] = o.size(), o.etag
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		rest := k[len(prefix):]
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			names[prefix+rest[:i+len(delim)]] = true
			continue
		}
		names[k] = false
	}
	s.mu.Unlock()
	sorted := make([]string, 0, len(names))
	for n := range names {
		if n > r.Token {
			sorted = append(sorted, n)
		}
	}
	sort.Strings(sorted)
	p := &Page{Prefix: prefix}
	for i, n := range sorted {
		if i == max {
			p.Truncated = true
			p.NextToken = sorted[i-1]
			break
		}
		if names[n] {
			p.Prefixes = append(p.Prefixes, n)
		} else {
			p.Keys = append(p.Keys, n)
		}
	}
	if hook != nil {
		hook(r, p)
	}
	type content struct {
		Key          string
		LastModified string
		ETag         string
		Size         int64
	}
	type cprefix struct{ Prefix string }
	res := struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Name                  string
		Prefix                string
		KeyCount              int
		MaxKeys               int
		IsTruncated           bool
		NextContinuationToken string `xml:",omitempty"`
		Contents              []content
		CommonPrefixes        []cprefix
	}{Name: Bucket, Prefix: prefix, KeyCount: len(p.Keys) + len(p.Prefixes), MaxKeys: max,
		IsTruncated: p.Truncated, NextContinuationToken: p.NextToken}
	for _, k := range p.Keys {
		res.Contents = append(res.Contents, content{Key: k, LastModified: "2025-01-01T00:00:00.000Z", ETag: etags[k], Size: sizes[k]})
	}
	for _, c := range p.Prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, cprefix{c})
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, xml.Header)
	xml.NewEncoder(w).Encode(res)
}

// countingWriter records the status and counts the body bytes sent.
type countingWriter struct {
	http.ResponseWriter
	r *Request
	s *Server
}

func (c *countingWriter) WriteHeader(status int) {
	c.s.mu.Lock()
	c.r.Status = status
	c.s.mu.Unlock()
	c.ResponseWriter.WriteHeader(status)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	atomic.AddInt64(&c.r.Sent, int64(n))
	return n, err
}
