package s3obj

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// The FS over a prefix passes io/fs's own conformance test, with list pages
// small enough to paginate.
func TestFS(t *testing.T) {
	f, srv := newFake(t)
	f.pageSize = 2
	f.put("b/logs/a.log", pattern(3000, 1))
	f.put("b/logs/b.rio", pattern(10, 2))
	f.put("b/logs/dir/c.log", pattern(2*mib+5, 3))
	f.put("b/logs/dir/d/e", []byte("e"))
	f.put("b/logs/dir/", nil) // a console's directory marker
	f.put("b/other/x", []byte("x"))
	f.put("b/logsx", []byte("not under logs/"))
	fsys := testClient(t, srv, Options{}).FS(context.Background(), "b", "logs")
	if err := fstest.TestFS(fsys, "a.log", "b.rio", "dir/c.log", "dir/d/e"); err != nil {
		t.Fatal(err)
	}
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "a.log b.rio dir" {
		t.Errorf("root lists %q", got)
	}
	fl, err := fsys.Open("dir/c.log")
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	obj := fl.(*File)
	if obj.Size() != 2*mib+5 || obj.Identity().Key != "s3://"+strings.TrimPrefix(srv.URL, "http://")+"/b/logs/dir/c.log" {
		t.Errorf("file %d %v", obj.Size(), obj.Identity())
	}
	if _, err := fsys.Open("nope"); !errorsIsNotExist(err) {
		t.Errorf("open missing: %v", err)
	}
}

func errorsIsNotExist(err error) bool {
	return err != nil && strings.Contains(err.Error(), fs.ErrNotExist.Error())
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, bucket, key string
		ok              bool
	}{
		{"s3://b/k/l.log", "b", "k/l.log", true},
		{"s3://b/p/", "b", "p/", true},
		{"s3://b", "b", "", true},
		{"s3:///k", "", "", false},
		{"/tmp/x", "", "", false},
	} {
		b, k, err := ParseURL(c.in)
		if (err == nil) != c.ok || b != c.bucket || k != c.key {
			t.Errorf("ParseURL(%q) = %q, %q, %v", c.in, b, k, err)
		}
	}
}

func TestAutoPathStyle(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "localhost": true, "minio.localhost": true,
		"s3.amazonaws.com": false, "store.example.com": false,
	} {
		if autoPathStyle(host) != want {
			t.Errorf("autoPathStyle(%q) != %v", host, want)
		}
	}
}

// Without an ETag the version falls back to size and Last-Modified.
func TestIdentityFallback(t *testing.T) {
	h := headResult{size: 5}
	if v := h.identity("s3://e/b/k").Version; !strings.HasPrefix(v, "size=5 mtime=") {
		t.Errorf("version %q", v)
	}
	h.etag = `"x"`
	if v := h.identity("s3://e/b/k").Version; v != `etag="x" size=5` {
		t.Errorf("version %q", v)
	}
}
