package s3

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	logtest "github.com/sirupsen/logrus/hooks/test"
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

// Listings keep every entry a kernel can name, once: a name longer than
// 255 bytes is left out (one log line), a key the store lists twice or
// outside the prefix is not listed again, and when an object and a prefix
// share a name the directory keeps it and the object is NAME.recfs-object
// (unless a key has that name: one log line) — in listings and in Open,
// whether or not the directory was listed first. io/fs's conformance test
// agrees.
func TestListingNames(t *testing.T) {
	f, srv := newFake(t)
	f.pageSize = 2 // twins fall on different pages
	long := strings.Repeat("L", 300)
	for _, k := range []string{"a.log", long, "q", "q/in", "q" + ObjectSuffix, "x", "x/in"} {
		f.put("b/d/"+k, pattern(100+len(k), 1))
	}
	// The store repeats each page's last entry on the next page, and
	// lists keys outside the prefix and with names no kernel takes.
	var last listResult
	f.listExtra = func(res *listResult) {
		if res.Prefix != "d/" {
			return
		}
		prev := last
		last = listResult{}
		if n := len(res.Contents); n > 0 {
			last.Contents = res.Contents[n-1:]
		}
		if n := len(res.CommonPrefixes); n > 0 {
			last.CommonPrefixes = res.CommonPrefixes[n-1:]
		}
		res.Contents = append(res.Contents, prev.Contents...)
		res.CommonPrefixes = append(res.CommonPrefixes, prev.CommonPrefixes...)
		for _, k := range []string{"e/outside", "outside", "d/..", "d/a//b"} {
			res.Contents = append(res.Contents, listContent{Key: k, LastModified: "2025-01-01T00:00:00.000Z"})
		}
		res.CommonPrefixes = append(res.CommonPrefixes, listCPrefix{Prefix: "d//"}, listCPrefix{Prefix: "zzz/"})
	}
	logs := logtest.NewGlobal()
	defer logs.Reset()
	c := testClient(t, srv, Options{})
	fsys := c.FS(context.Background(), "b", "")
	ents, err := fs.ReadDir(fsys, "d")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.IsDir()))
	}
	if got, want := strings.Join(names, " "), "a.log:false q:true q.recfs-object:false x:true x.recfs-object:false"; got != want {
		t.Errorf("listing:\n%s\nwant\n%s", got, want)
	}
	var long1, taken int
	for _, e := range logs.AllEntries() {
		long1 += strings.Count(e.Message, "longer than 255")
		taken += strings.Count(e.Message, "cannot be listed")
	}
	if long1 != 1 || taken != 1 {
		t.Errorf("%d log lines about long names, %d about taken names; want 1 and 1", long1, taken)
	}
	if err := fstest.TestFS(fsys, "d/a.log", "d/x/in", "d/x.recfs-object", "d/q/in"); err != nil {
		t.Error(err)
	}
	// A fresh FS, nothing listed: Open finds the same.
	for _, fresh := range []bool{false, true} {
		if fresh {
			fsys = c.FS(context.Background(), "b", "")
		}
		if fi, err := fs.Stat(fsys, "d/x"); err != nil || !fi.IsDir() {
			t.Errorf("fresh %v: d/x: %v, want the directory", fresh, err)
		}
		if fi, err := fs.Stat(fsys, "d/x"+ObjectSuffix); err != nil || fi.IsDir() || fi.Size() != 101 {
			t.Errorf("fresh %v: d/x%s: %v, want the object x", fresh, ObjectSuffix, err)
		}
		if fi, err := fs.Stat(fsys, "d/q"+ObjectSuffix); err != nil || fi.Size() != int64(100+len("q"+ObjectSuffix)) {
			t.Errorf("fresh %v: d/q%s: %v, want the key of that name", fresh, ObjectSuffix, err)
		}
		if _, err := fs.Stat(fsys, "d/a.log"+ObjectSuffix); err == nil {
			t.Errorf("fresh %v: an object without a twin has a second name", fresh)
		}
	}
}

// A listing ends after ListMaxPages pages or ListMaxBytes of names with one
// log line and the entries so far; a repeated continuation token fails it;
// a cancelled caller's context (WithContext) stops it.
func TestListingBounds(t *testing.T) {
	f, srv := newFake(t)
	f.pageSize = 2
	for i := range 10 {
		f.put(fmt.Sprintf("b/k%02d", i), []byte("x"))
	}
	logs := logtest.NewGlobal()
	defer logs.Reset()
	for _, c := range []struct {
		o    Options
		want int
	}{
		{Options{ListMaxPages: 3}, 6},
		{Options{ListMaxBytes: 300}, 4}, // 2 entries of 131 bytes a page
		{Options{}, 10},
	} {
		logs.Reset()
		ents, err := fs.ReadDir(testClient(t, srv, c.o).FS(context.Background(), "b", ""), ".")
		cut := 0
		for _, e := range logs.AllEntries() {
			cut += strings.Count(e.Message, "listing too long")
		}
		if err != nil || len(ents) != c.want || cut != min(1, 10-c.want) {
			t.Errorf("%+v: %d entries, %v, %d log lines; want %d", c.o, len(ents), err, cut, c.want)
		}
	}
	fsys := testClient(t, srv, Options{}).FS(context.Background(), "b", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fs.ReadDir(fsys.WithContext(ctx), "."); !errors.Is(err, context.Canceled) {
		t.Errorf("listing under a cancelled context: %v", err)
	}
	f.mu.Lock()
	f.listExtra = func(res *listResult) { res.IsTruncated, res.NextContinuationToken = true, "same" }
	f.mu.Unlock()
	if _, err := fs.ReadDir(fsys, "."); !errors.Is(err, ErrListLoop) {
		t.Errorf("a repeated token: %v", err)
	}
}

// WithSidecars: sidecars are neither listed nor opened, and each listed
// object says whether its sidecar was listed, across page boundaries and
// for an object renamed because a prefix has its name. Its ListedObject
// opens it without a HEAD.
func TestFSSidecars(t *testing.T) {
	for _, pageSize := range []int{1, 2, 1000} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			f, srv := newFake(t)
			f.pageSize = pageSize
			f.put("b/p/a.log", pattern(3000, 1))
			f.put("b/p/a.log.recfs-idx", []byte("idx"))
			f.put("b/p/b.log", pattern(10, 2))
			f.put("b/p/x", pattern(20, 3))
			f.put("b/p/x.recfs-idx", []byte("idx"))
			f.put("b/p/x/in", []byte("in"))
			f.put("b/p/orphan.recfs-idx", []byte("idx"))
			c := testClient(t, srv, Options{})
			fsys := c.FS(context.Background(), "b", "p").WithSidecars(".recfs-idx")
			ents, err := fs.ReadDir(fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				fi, _ := e.Info()
				lo, _ := fi.Sys().(*ListedObject)
				if lo == nil {
					got = append(got, e.Name()+"/")
					continue
				}
				got = append(got, fmt.Sprintf("%s=%s:%v", e.Name(), lo.Key, lo.Sidecar))
			}
			want := "a.log=p/a.log:true b.log=p/b.log:false x/ x" + ObjectSuffix + "=p/x:true"
			if strings.Join(got, " ") != want {
				t.Errorf("listing %q, want %q", strings.Join(got, " "), want)
			}
			if _, err := fsys.Open("a.log.recfs-idx"); !errorsIsNotExist(err) {
				t.Errorf("open of a sidecar: %v, want not found", err)
			}
			heads := len(f.requests("HEAD"))
			fi, _ := ents[0].Info()
			obj := c.OpenListed("b", fi.Sys().(*ListedObject), fi.Size(), fi.ModTime())
			defer obj.Close()
			b := make([]byte, 3000)
			if _, err := obj.ReadAt(b, 0); err != nil || string(b) != string(pattern(3000, 1)) {
				t.Errorf("read of a listed object: %v", err)
			}
			if n := len(f.requests("HEAD")) - heads; n != 0 {
				t.Errorf("OpenListed made %d HEADs", n)
			}
		})
	}
}
