package e2e

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/leveldb"
)

// httpFiles serves dir with net/http's file server (Range, If-Range and
// Last-Modified as the standard library does them); while stall is set,
// its GETs never answer (until the client gives up or the test ends);
// while etags is set, each answer carries a strong ETag, a hash of the
// file's bytes (as CDNs and object stores send).
type httpFiles struct {
	*httptest.Server
	dir   string
	stall atomic.Bool
	etags atomic.Bool
}

func startHTTP(t *testing.T) *httpFiles {
	t.Helper()
	h := &httpFiles{dir: t.TempDir()}
	fsrv := http.FileServer(http.Dir(h.dir))
	done := make(chan struct{})
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && h.stall.Load() {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		if h.etags.Load() {
			if b, err := os.ReadFile(filepath.Join(h.dir, path.Clean(r.URL.Path))); err == nil {
				w.Header().Set("ETag", fmt.Sprintf(`"%x"`, sha256.Sum256(b)))
			}
		}
		fsrv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(done); h.Close() })
	return h
}

// put writes data as name, with a modification time that differs from
// the previous version's (Last-Modified has a resolution of a second).
func (h *httpFiles) put(t *testing.T, name string, data []byte, mod time.Time) string {
	t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return h.URL + "/" + name
}

// TestHTTPCat: cat, ls and info of an http:// URL print what they print
// for the same file on disk; a record read alone too.
func TestHTTPCat(t *testing.T) {
	t.Parallel()
	h := startHTTP(t)
	data := genS3Log(t, 31, 300)
	url := h.put(t, "gen.log", data, time.Now())
	local := writeTemp(t, "gen.log", data)
	for _, c := range []struct{ args, sel []string }{
		{[]string{"cat"}, nil}, {[]string{"cat", "--no-cache"}, nil},
		{[]string{"cat", "--sep", "nl"}, []string{"7", "250-"}}, {[]string{"ls"}, nil},
	} {
		args := c.args
		want := runRecfs(t, slices.Concat(args, []string{local}, c.sel)...)
		got := runRecfs(t, slices.Concat(args, []string{url}, c.sel)...)
		if want.code != 0 || got.code != 0 || got.stdout != want.stdout {
			t.Errorf("recfs %s: URL exit %d (%d bytes), file exit %d (%d bytes); same output %v\n%s",
				strings.Join(args, " "), got.code, len(got.stdout), want.code, len(want.stdout), got.stdout == want.stdout, got.stderr)
		}
		if len(want.stdout) == 0 {
			t.Errorf("recfs %s printed nothing", strings.Join(args, " "))
		}
	}
	if r := runRecfs(t, "info", url); r.code != 0 || !strings.Contains(r.stdout, "300") {
		t.Errorf("recfs info URL: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runRecfs(t, "cat", h.URL+"/missing.log"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("recfs cat of a missing URL: %d %q", r.code, r.stderr)
	}
}

// TestHTTPMount mounts an http:// URL on both backends: the same tree as
// the file's on disk, read-only.
func TestHTTPMount(t *testing.T) {
	needFUSE(t)
	h := startHTTP(t)
	data := genS3Log(t, 32, 400)
	url := h.put(t, "m.log", data, time.Now())
	local := writeTemp(t, "m.log", data)
	eachBackend(t, func(t *testing.T, backend string) {
		lm, rm := newMountDir(t), newMountDir(t)
		startMount(t, local, lm, "--backend", backend)
		startMount(t, url, rm, "--backend", backend)
		if n := compareTrees(t, lm, rm); n != 400 {
			t.Errorf("compared %d records, want 400", n)
		}
		if _, err := os.Create(filepath.Join(rm, "new")); !errors.Is(err, syscall.EROFS) {
			t.Errorf("create on an http mount: %v, want EROFS", err)
		}
	})
	if r := runRecfs(t, "mount", "--rw", url, newMountDir(t)); r.code != 2 || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("mount --rw of a URL: %d %q", r.code, r.stderr)
	}
}

// TestHTTPFollow: a --follow mount of an http:// URL shows the records of
// the file's new version (a new Last-Modified) once the server has it, and
// a record held open across the change reads EIO.
func TestHTTPFollow(t *testing.T) {
	needFUSE(t)
	h := startHTTP(t)
	v1, v2, local := grownLogs(t, 33)
	t0 := time.Now().Add(-time.Hour)
	eachBackend(t, func(t *testing.T, backend string) {
		name := "follow-" + backend + ".log"
		url := h.put(t, name, v1, t0)
		mnt := newMountDir(t)
		m := startMount(t, url, mnt, "--backend", backend, "--follow", "--follow-interval", "200ms")
		checkGrownFollowed(t, m, mnt, local, backend, "file", func() { h.put(t, name, v2, t0.Add(time.Minute)) })
	})
}

// TestHTTPChanged: a file replaced on the server under a mount fails the
// reads that reach the server with EIO, never bytes of the new version:
// when the new version has a new Last-Modified, and when it has the same
// length and Last-Modified but another strong ETag (a valid log of the
// same shape, so only the ETag tells the versions apart).
func TestHTTPChanged(t *testing.T) {
	needFUSE(t)
	h, ht := startHTTP(t), startHTTP(t)
	ht.etags.Store(true)
	oldLog := genS3Log(t, 34, 600)
	t0 := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		name     string
		h        *httpFiles
		newLog   []byte
		newMtime time.Time
	}{
		{"last-modified", h, genS3Log(t, 35, 600), t0.Add(time.Minute)},
		{"etag", ht, sameShape(t, oldLog), t0},
	} {
		t.Run(c.name, func(t *testing.T) { checkHTTPChanged(t, c.h, oldLog, c.newLog, t0, c.newMtime) })
	}
}

// checkHTTPChanged mounts oldLog served by h on each backend, replaces it
// by newLog (modified at newMtime) and wants EIO from a read that reaches
// the server.
func checkHTTPChanged(t *testing.T, h *httpFiles, oldLog, newLog []byte, t0, newMtime time.Time) {
	eachBackend(t, func(t *testing.T, backend string) {
		name := "w-" + backend + ".log"
		url := h.put(t, name, oldLog, t0)
		mnt := newMountDir(t)
		// A cache smaller than the file: the build's scan does not
		// leave the middle of it in memory.
		startMount(t, url, mnt, "--backend", backend, "--no-cache", "--http-cache", "1M")
		recs := recordNames(t, mnt)
		if len(recs) != 600 {
			t.Fatalf("%d records listed, want 600", len(recs))
		}
		if _, err := os.ReadFile(filepath.Join(mnt, recs[0])); err != nil {
			t.Fatal(err)
		}
		h.put(t, name, newLog, newMtime)
		if b, err := os.ReadFile(filepath.Join(mnt, recs[len(recs)/2])); !errors.Is(err, syscall.EIO) {
			t.Fatalf("read after the file was replaced: %d bytes, %v; want EIO", len(b), err)
		}
	})
}

// sameShape returns a log of the records of log with each payload byte
// flipped: as long as log, framed the same, valid, with other bytes.
func sameShape(t *testing.T, log []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	sc := leveldb.NewScanner(bytes.NewReader(log), int64(len(log)), leveldb.Options{})
	for sc.Next() {
		rec := sc.Record()
		p := make([]byte, rec.Len)
		if _, err := leveldb.ReadRecord(bytes.NewReader(log), rec, p, 0, leveldb.Options{}); err != nil {
			t.Fatalf("record at %d: %v", rec.Off, err)
		}
		for i := range p {
			p[i] ^= 0xff
		}
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != len(log) || bytes.Equal(buf.Bytes(), log) {
		t.Fatalf("same-shape log: %d bytes (want %d), equal %v", buf.Len(), len(log), bytes.Equal(buf.Bytes(), log))
	}
	return buf.Bytes()
}

// TestHTTPStalled: a server that stops answering GETs costs a read the
// --http-timeout, then an error naming the deadline: no hang.
func TestHTTPStalled(t *testing.T) {
	t.Parallel()
	h := startHTTP(t)
	url := h.put(t, "s.log", genS3Log(t, 36, 50), time.Now())
	h.stall.Store(true)
	start := time.Now()
	r := runRecfs(t, "cat", "--no-cache", "--http-timeout", "1s", url)
	if r.code != 1 || !strings.Contains(r.stderr, "no answer within 1s") {
		t.Errorf("cat of a stalled server: exit %d, stderr %q", r.code, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cat of a stalled server took %v with --http-timeout 1s", d)
	}
}
