package index

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/source"
)

// memSource is a source.Source over bytes with a settable identity.
type memSource struct {
	*bytes.Reader
	id source.Identity
}

func (m memSource) Identity() source.Identity { return m.id }

// A source's table is built once and then loaded from the cache for the same
// identity; another version (or another key) builds afresh, and a cached
// table that does not read back from the source is not used.
func TestOpenSourceCache(t *testing.T) {
	data, recs := genLog(t, 1, 300, 5000)
	dir := t.TempDir()
	o := Options{CacheDir: dir}
	src := memSource{bytes.NewReader(data), source.Identity{Key: "s3://e/b/k", Version: `etag="1" size=1`}}
	for i, want := range []string{"built", "cached"} {
		tb, err := OpenSource(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		in := tb.Info()
		if in.Loaded != want || in.Records != int64(len(recs)) || in.Path != "s3://e/b/k" {
			t.Fatalf("open %d: %+v, want %s with %d records", i, in, want, len(recs))
		}
		for n, r := range recs {
			got := make([]byte, len(r))
			if _, err := tb.ReadAt(int64(n), got, 0); err != nil || !bytes.Equal(got, r) {
				t.Fatalf("record %d: %v", n, err)
			}
		}
	}
	for _, id := range []source.Identity{
		{Key: "s3://e/b/k", Version: `etag="2" size=1`},
		{Key: "s3://e/b/other", Version: `etag="1" size=1`},
	} {
		tb, err := OpenSource(context.Background(), memSource{bytes.NewReader(data), id}, o)
		if err != nil {
			t.Fatal(err)
		}
		if tb.Info().Loaded != "built" {
			t.Errorf("%v: %s, want built", id, tb.Info().Loaded)
		}
	}
	// A weak version (size and time, no entity tag) with other bytes behind
	// it: the saved table's records fail their checksums on the check read,
	// so it is rebuilt.
	weak := source.Identity{Key: "s3://e/b/k", Version: "size=1 mtime=2026-01-01T00:00:00Z"}
	if _, err := OpenSource(context.Background(), memSource{bytes.NewReader(data), weak}, o); err != nil {
		t.Fatal(err)
	}
	other, _ := genLog(t, 2, 300, 5000)
	tb, err := OpenSource(context.Background(), memSource{bytes.NewReader(other), weak}, o)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Info().Loaded != "built" {
		t.Errorf("cached table used over other bytes")
	}
}

// A table saved on one machine and imported on another (published next to
// the object) is used there for the same version under any key, and only
// then: another version or damaged bytes build afresh.
func TestImportSource(t *testing.T) {
	data, recs := genLog(t, 3, 200, 3000)
	ctx := context.Background()
	oa := Options{CacheDir: t.TempDir()}
	a := source.Identity{Key: "s3://one-endpoint/b/k", Version: `etag="7" size=9`}
	ta, err := OpenSource(ctx, memSource{bytes.NewReader(data), a}, oa)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(ta.Info().CacheFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		version string
		b       []byte
		want    string
	}{
		{"same version", a.Version, saved, "cached"},
		{"other version", `etag="8" size=9`, saved, "built"},
		{"damaged", a.Version, append(bytes.Clone(saved[:len(saved)-1]), saved[len(saved)-1]^1), "built"},
	} {
		ob := Options{CacheDir: t.TempDir()}
		b := source.Identity{Key: "s3://another-name/b/k", Version: c.version}
		if err := ImportSource(ob, b, int64(len(data)), bytes.NewReader(c.b), int64(len(c.b))); err != nil {
			t.Fatal(err)
		}
		tb, err := OpenSource(ctx, memSource{bytes.NewReader(data), b}, ob)
		if err != nil {
			t.Fatal(err)
		}
		if tb.Info().Loaded != c.want || tb.Len() != int64(len(recs)) {
			t.Errorf("%s: %s with %d records, want %s", c.name, tb.Info().Loaded, tb.Len(), c.want)
		}
	}
}

// A published table is refused, and leaves no cache file, when it is
// larger than its source could need: from its declared length before a
// byte of it is read, else as it streams (past the bound, or short of
// its declared length).
func TestImportSourceBounds(t *testing.T) {
	a := source.Identity{Key: "s3://e/b/k", Version: `etag="7" size=10`}
	bound := cacheFileBound(10)
	for _, c := range []struct {
		name string
		r    io.Reader
		n    int64
		want error
	}{
		{"declared too large", failReader{t}, bound + 1, ErrSavedTooLarge},
		{"endless, undeclared", zeroReader{}, -1, ErrSavedTooLarge},
		{"longer than declared", zeroReader{}, 100, ErrSavedTooLarge},
		{"shorter than declared", bytes.NewReader(make([]byte, 50)), 100, io.ErrUnexpectedEOF},
	} {
		o := Options{CacheDir: t.TempDir()}
		if err := ImportSource(o, a, 10, c.r, c.n); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := os.Stat(SourceCacheFile(o, a)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: cache file left: %v", c.name, err)
		}
		left, _ := filepath.Glob(filepath.Join(o.CacheDir, "*", ".tmp-*"))
		left2, _ := filepath.Glob(filepath.Join(o.CacheDir, ".tmp-*"))
		if len(left)+len(left2) > 0 {
			t.Errorf("%s: temporary files left: %v %v", c.name, left, left2)
		}
	}
}

// failReader fails the test when it is read.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("read before the declared length was checked")
	return 0, io.EOF
}

// zeroReader reads zeros for ever.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
