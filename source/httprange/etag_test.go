package httprange

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/source"
)

// etagServer serves one file with net/http's http.ServeContent (Range,
// If-Range by entity tag or date), an ETag of the handler's choice and a
// fixed Last-Modified; it records the If-Range of each GET.
type etagServer struct {
	*httptest.Server
	mu       sync.Mutex
	data     []byte
	etag     string
	mod      time.Time
	ifRanges []string
}

func newETagServer(t *testing.T, data []byte, etag string) *etagServer {
	t.Helper()
	s := &etagServer{data: data, etag: etag, mod: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, etag, mod := s.data, s.etag, s.mod
		if r.Method == http.MethodGet {
			s.ifRanges = append(s.ifRanges, r.Header.Get("If-Range"))
		}
		s.mu.Unlock()
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "f", mod, bytes.NewReader(data))
	}))
	t.Cleanup(s.Close)
	return s
}

// replace serves data under etag from now on; the length and
// Last-Modified stay as they were when data is as long as before.
func (s *etagServer) replace(data []byte, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data, s.etag = data, etag
}

// seen returns the If-Range headers of the GETs so far.
func (s *etagServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ifRanges...)
}

// TestObjectETag: with a strong entity tag the tag is the version, each
// ranged GET asks for it (If-Range), and content replaced under the same
// length and Last-Modified fails the reads that reach the server with
// source.ErrChanged, never bytes of the new content; Stat sees the new
// version and Reopen reads it.
func TestObjectETag(t *testing.T) {
	t.Parallel()
	v1, v2 := pattern(3<<20, 1), pattern(3<<20, 9)
	s := newETagServer(t, v1, `"v1"`)
	o, err := NewClient(Options{BlockSize: 1 << 20}).Open(t.Context(), s.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	if v := o.Identity().Version; v != `etag="v1",size=3145728` {
		t.Errorf("version %q, want the entity tag's", v)
	}
	b := make([]byte, 100)
	if _, err := o.ReadAt(b, 0); err != nil || !bytes.Equal(b, v1[:100]) {
		t.Fatalf("first read: %v (content equal %v)", err, bytes.Equal(b, v1[:100]))
	}
	if got := s.seen(); len(got) != 1 || got[0] != `"v1"` {
		t.Errorf("If-Range of the GETs %q, want the entity tag", got)
	}

	s.replace(v2, `"v2"`)
	if _, err := o.ReadAt(b, 0); err != nil || !bytes.Equal(b, v1[:100]) {
		t.Errorf("read of the cached block: %v", err)
	}
	for _, off := range []int64{1<<20 + 5, 2<<20 + 5} {
		if n, err := o.ReadAt(b, off); !errors.Is(err, source.ErrChanged) {
			t.Errorf("read at %d after the change: %d bytes, %v; want ErrChanged", off, n, err)
		}
	}
	id, size, err := o.Stat()
	if err != nil || id == o.Identity() || size != o.Size() || !strings.Contains(id.Version, `"v2"`) {
		t.Fatalf("Stat after the change: %+v %d, %v; want the new entity tag", id, size, err)
	}

	n, err := o.Reopen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n.Identity() != id {
		t.Errorf("reopened version %+v, Stat said %+v", n.Identity(), id)
	}
	got, err := io.ReadAll(io.NewSectionReader(n, 0, int64(len(v2))))
	if err != nil || !bytes.Equal(got, v2) {
		t.Errorf("read of the reopened object: %d bytes, %v; new content %v", len(got), err, bytes.Equal(got, v2))
	}
}

// TestObjectETagSameVersion: a 206 whose strong entity tag is not the one
// opened is refused even when the server ignored If-Range.
func TestObjectETagSameVersion(t *testing.T) {
	t.Parallel()
	v1 := pattern(2<<20, 1)
	var mu sync.Mutex
	etag := `"a"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		w.Header().Set("ETag", etag)
		mu.Unlock()
		r.Header.Del("If-Range") // a server that does not honour If-Range
		http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(v1))
	}))
	t.Cleanup(srv.Close)
	o, err := NewClient(Options{BlockSize: 1 << 20}).Open(t.Context(), srv.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	if _, err := o.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	etag = `"b"`
	mu.Unlock()
	if n, err := o.ReadAt(b, 1<<20); !errors.Is(err, source.ErrChanged) {
		t.Errorf("206 with another entity tag: %d bytes, %v; want ErrChanged", n, err)
	}
}

// TestObjectWeakETag: a weak entity tag names no bytes: the version is the
// Last-Modified time and length, If-Range carries the date, and a new
// Last-Modified is a new version.
func TestObjectWeakETag(t *testing.T) {
	t.Parallel()
	v1, v2 := pattern(2<<20, 1), pattern(2<<20, 9)
	s := newETagServer(t, v1, `W/"v1"`)
	o, err := NewClient(Options{BlockSize: 1 << 20}).Open(t.Context(), s.URL+"/f")
	if err != nil {
		t.Fatal(err)
	}
	lm := s.mod.Format(http.TimeFormat)
	if v := o.Identity().Version; v != "modified="+lm+",size=2097152" {
		t.Errorf("version %q, want Last-Modified and size", v)
	}
	b := make([]byte, 100)
	if _, err := o.ReadAt(b, 0); err != nil || !bytes.Equal(b, v1[:100]) {
		t.Fatalf("first read: %v", err)
	}
	if got := s.seen(); len(got) != 1 || got[0] != lm {
		t.Errorf("If-Range of the GETs %q, want the Last-Modified date %q", got, lm)
	}
	// Another weak tag, the same date: not a new version (a weak tag is
	// no evidence of the bytes).
	s.replace(v1, `W/"v1b"`)
	if _, err := o.ReadAt(b, 1<<20); err != nil || !bytes.Equal(b, v1[1<<20:1<<20+100]) {
		t.Errorf("read with another weak tag, same date: %v", err)
	}
	s.mu.Lock()
	s.data, s.etag, s.mod = v2, `W/"v2"`, s.mod.Add(time.Minute)
	s.mu.Unlock()
	o.Close() // drop the cache: the next read reaches the server
	if n, err := o.ReadAt(b, 5); !errors.Is(err, source.ErrChanged) {
		t.Errorf("read after a new Last-Modified: %d bytes, %v; want ErrChanged", n, err)
	}
	if id, _, err := o.Stat(); err != nil || id == o.Identity() {
		t.Errorf("Stat after the change: %+v, %v", id, err)
	}
}
