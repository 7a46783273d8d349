package index

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
	"github.com/recfs/recfs/source/sourcetest"
)

// TestOpenSource: a table of a non-local source is built once, saved under
// its Identity and loaded from the cache next time; reads go through the
// source; an overwritten source fails reads and Refresh with ErrChanged,
// never with bytes of the new version; a new version is a new table; a
// writable open is refused.
func TestOpenSource(t *testing.T) {
	recs := codectest.Records(50, 3000, 'o')
	var logBuf bytes.Buffer
	w := leveldb.NewWriter(&logBuf, leveldb.WriterOptions{})
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rio := recfile.RIOBytes(t, recs, recordio.WriterOptions{Transformers: []string{"zstd"}}, nil)
	for _, c := range []struct {
		name string
		data []byte
	}{{"leveldb", logBuf.Bytes()}, {"recordio", rio}} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			ctx := context.Background()
			o := Options{CacheDir: cache}
			for _, want := range []string{"built", "cached"} {
				src := sourcetest.NewMem("s3://bucket/"+c.name, c.data)
				tb, err := OpenSource(ctx, src, o)
				if err != nil {
					t.Fatal(err)
				}
				if tb.Info().Loaded != want || tb.Len() != int64(len(recs)) {
					t.Fatalf("source %q, %d records; want %q, %d", tb.Info().Loaded, tb.Len(), want, len(recs))
				}
				for _, i := range []int64{0, 17, int64(len(recs) - 1)} {
					if got := readRecord(t, tb, i); !bytes.Equal(got, recs[i]) {
						t.Fatalf("record %d differs", i)
					}
				}
				if changed, err := tb.Refresh(ctx); changed || err != nil {
					t.Fatalf("refresh of an unchanged source: %v, %v", changed, err)
				}
				if err := tb.Close(); err != nil || !src.Closed() {
					t.Fatalf("close: %v, source closed %v", err, src.Closed())
				}
			}
			saved, _ := filepath.Glob(filepath.Join(cache, "*.idx"))
			if len(saved) != 1 {
				t.Fatalf("%d cache files, want 1: %v", len(saved), saved)
			}

			src := sourcetest.NewMem("s3://bucket/"+c.name, c.data)
			tb, err := OpenSource(ctx, src, o)
			if err != nil {
				t.Fatal(err)
			}
			src.Replace(bytes.Repeat([]byte{'x'}, len(c.data)))
			p := make([]byte, 10)
			if _, err := tb.ReadAt(3, p, 0); !errors.Is(err, ErrChanged) || !errors.Is(err, source.ErrChanged) {
				t.Fatalf("read of an overwritten source: %v, want ErrChanged", err)
			}
			if _, err := tb.Refresh(ctx); !errors.Is(err, ErrChanged) {
				t.Fatalf("refresh of an overwritten source: %v, want ErrChanged", err)
			}

			// Another version under the same key is not served from the
			// cache of the first.
			other := sourcetest.NewMem("s3://bucket/"+c.name, c.data[:len(c.data)/2])
			if tb2, err := OpenSource(ctx, other, o); err == nil && tb2.Info().Loaded == "cached" {
				t.Fatal("a table saved for one version served another")
			}
		})
	}
	if _, err := OpenSource(context.Background(), sourcetest.NewMem("k", nil), Options{Writable: true}); !errors.Is(err, ErrWritableSource) {
		t.Fatalf("writable OpenSource: %v", err)
	}
}

// TestOpenSourceLocal: a local.File, which maps, reads a table like Open
// does, through the descriptor it was given (a rename of the path after it
// was opened changes nothing).
func TestOpenSourceLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	recs := codectest.Records(30, 500, 'l')
	recfile.WriteLog(t, path, recs)
	src := openLocal(t, path)
	if err := renameAway(path); err != nil {
		t.Fatal(err)
	}
	tb, err := OpenSource(context.Background(), src, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Len() != int64(len(recs)) || !bytes.Equal(readRecord(t, tb, 29), recs[29]) {
		t.Fatalf("%d records", tb.Len())
	}
	var _ io.ReaderAt = src
}

// openLocal opens path as a local.File.
func openLocal(t *testing.T, path string) *local.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := local.New(f, path)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	return l
}

// renameAway moves path aside and puts other bytes at it.
func renameAway(path string) error {
	if err := os.Rename(path, path+".old"); err != nil {
		return err
	}
	return os.WriteFile(path, []byte("not a record file"), 0o644)
}

// TestReadOnlySource: a table of a source without the write capabilities
// (no source.Writer, no source.FileStater) refuses Sync, Append,
// AppendFrom and CheckAppend with ErrWritableSource, and its bytes stay.
func TestReadOnlySource(t *testing.T) {
	t.Parallel()
	var logBuf bytes.Buffer
	w := leveldb.NewWriter(&logBuf, leveldb.WriterOptions{})
	if _, err := w.WriteRecord([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(logBuf.Bytes())
	ctx := context.Background()
	tb, err := OpenSource(ctx, sourcetest.NewMem("s3://bucket/ro.log", logBuf.Bytes()), Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for name, err := range map[string]error{
		"Sync":        tb.Sync(),
		"CheckAppend": tb.CheckAppend(),
		"Append": func() error {
			_, err := tb.Append(ctx, [][]byte{[]byte("two")}, AppendOptions{})
			return err
		}(),
		"AppendFrom": func() error {
			_, err := tb.AppendFrom(ctx, []Stream{{R: bytes.NewReader([]byte("two")), Size: 3}}, AppendOptions{})
			return err
		}(),
	} {
		if !errors.Is(err, ErrWritableSource) {
			t.Errorf("%s: %v, want ErrWritableSource", name, err)
		}
	}
	if tb.Len() != 1 || !bytes.Equal(logBuf.Bytes(), data) {
		t.Fatalf("%d records, bytes changed %v; want 1 and unchanged", tb.Len(), !bytes.Equal(logBuf.Bytes(), data))
	}
}
