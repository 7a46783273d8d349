package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/source"
)

// TestStreamFetchesOnce: a stream serves the blocks the cache holds and
// GETs the rest once; a body cut off midway is asked for again from where
// it stopped, and the bytes are the object's.
func TestStreamFetchesOnce(t *testing.T) {
	f, _ := newFake(t)
	data := pattern(5*mib+123, 3)
	f.put("b/k", data)
	// The first GET of a streamed range (not starting at 0) is cut off
	// after 100 KiB.
	var cut atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Header.Get("Range"), "bytes=1048576-") && cut.CompareAndSwap(false, true) {
			w = &cutWriter{ResponseWriter: w, left: 100 << 10}
		}
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	head := make([]byte, 100)
	if _, err := o.ReadAt(head, 0); err != nil { // caches block 0, as detection does
		t.Fatal(err)
	}
	st, err := o.Stream(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(st)
	st.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}
	if !cut.Load() {
		t.Fatal("the test server cut no body")
	}
	s := o.Stats()
	// Block 0 once, the rest once, plus the 100 KiB the cut GET had sent.
	if s.BytesFetched > int64(len(data))+100<<10 || s.Gets != 3 {
		t.Errorf("fetched %d bytes of %d in %d GETs", s.BytesFetched, len(data), s.Gets)
	}
}

// TestStreamChanged: a stream of an object that changed fails with
// source.ErrChanged.
func TestStreamChanged(t *testing.T) {
	f, srv := newFake(t)
	f.put("b/k", pattern(3*mib, 1))
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	f.put("b/k", pattern(3*mib, 2))
	st, _ := o.Stream(context.Background(), 0)
	defer st.Close()
	if _, err := io.ReadAll(st); !errors.Is(err, source.ErrChanged) {
		t.Fatalf("stream of a changed object: %v", err)
	}
}

// cutWriter sends left bytes of a body, then aborts the response.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		w.ResponseWriter.Write(p[:w.left])
		w.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}
