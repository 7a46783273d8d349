package httprange

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/netread"
)

// fileServer serves dir with net/http's file server (Range, If-Range,
// Last-Modified); gets counts its GETs.
func fileServer(t *testing.T, dir string, gets *atomic.Int64) *httptest.Server {
	t.Helper()
	fsrv := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && gets != nil {
			gets.Add(1)
		}
		fsrv.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestObjectReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := pattern(3<<20+123, 1)
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int64
	srv := fileServer(t, dir, &gets)
	c := NewClient(Options{BlockSize: 1 << 20, CacheBytes: 2 << 20})
	o, err := c.Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	if o.Size() != int64(len(data)) || o.Identity().Key != srv.URL+"/f" || o.Identity().Version == "" {
		t.Fatalf("size %d identity %+v", o.Size(), o.Identity())
	}
	got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read all: %d bytes, %v; equal %v", len(got), err, bytes.Equal(got, data))
	}
	if g := gets.Load(); g != 4 {
		t.Errorf("%d GETs for 4 blocks", g)
	}
	p := make([]byte, 10)
	if n, err := o.ReadAt(p, int64(len(data))-5); n != 5 || err != io.EOF || !bytes.Equal(p[:5], data[len(data)-5:]) {
		t.Errorf("read past the end: %d, %v", n, err)
	}
	id, size, err := o.Stat()
	if err != nil || id != o.Identity() || size != o.Size() {
		t.Errorf("Stat: %+v %d %v", id, size, err)
	}
	if _, err := c.Open(t.Context(), srv.URL+"/missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("open of a missing URL: %v", err)
	}
}

// TestObjectChanged: a file replaced after Open fails the reads that reach
// the server (source.ErrChanged), and Stat sees the new version.
func TestObjectChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	data := pattern(2<<20, 1)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fileServer(t, dir, nil)
	o, err := NewClient(Options{}).Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 100)
	if _, err := o.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, pattern(2<<20, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ReadAt(b, 0); err != nil || !bytes.Equal(b, data[:100]) {
		t.Errorf("cached block: %v", err)
	}
	if n, err := o.ReadAt(b, 1<<20+5); !errors.Is(err, source.ErrChanged) {
		t.Errorf("read of the replaced file: %d bytes, %v; want ErrChanged", n, err)
	}
	if id, _, err := o.Stat(); err != nil || id == o.Identity() {
		t.Errorf("Stat after the change: %+v, %v", id, err)
	}
}

// TestObjectStalled: a server that never answers a GET fails the read
// within the timeout with a *TimeoutError.
func TestObjectStalled(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "1000")
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	o, err := NewClient(Options{Timeout: 300 * time.Millisecond}).Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = o.ReadAt(make([]byte, 10), 0)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("read of a stalled server: %v, want a TimeoutError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the read took %v with a 300ms timeout", d)
	}
}

// TestObjectNoRanges: a server that answers a range with the whole file
// is refused, not read as the range.
func TestObjectNoRanges(t *testing.T) {
	t.Parallel()
	data := pattern(3000, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.Header().Set("Content-Length", "3000")
		if r.Method == http.MethodGet {
			w.Write(data)
		}
	}))
	t.Cleanup(srv.Close)
	o, err := NewClient(Options{}).Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.ReadAt(make([]byte, 10), 5); !errors.Is(err, ErrNoRanges) {
		t.Errorf("read from a server without ranges: %v", err)
	}
}

// TestObjectStalledBody: a GET whose body stops mid-way is abandoned at
// the idle limit and tried again, long before the request's budget; when
// every attempt stalls the read fails naming the idle limit.
func TestObjectStalledBody(t *testing.T) {
	t.Parallel()
	var gets atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "1000")
			return
		}
		gets.Add(1)
		w.Header().Set("Content-Range", "bytes 0-999/1000")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusPartialContent)
		w.Write(make([]byte, 100))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	o := Options{Timeout: time.Minute, Attempts: 2, Limits: netread.Limits{Idle: 200 * time.Millisecond}}
	obj, err := NewClient(o).Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = obj.ReadAt(make([]byte, 10), 0)
	var te *netread.TimeoutError
	if !errors.As(err, &te) || te.Op != netread.OpIdle {
		t.Fatalf("read of a body that stalls: %v, want a netread idle TimeoutError", err)
	}
	if g := gets.Load(); g != 2 {
		t.Errorf("%d GETs, want one per attempt (2)", g)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the read took %v with a 200ms idle limit", d)
	}
}
