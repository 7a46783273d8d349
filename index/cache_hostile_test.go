package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/source/local"
)

// hostileRecords are records of distinct sizes, so that a table pointing
// one record at another's bytes cannot pass for the right one.
func hostileRecords(n int, tag byte) [][]byte {
	var out [][]byte
	for i := range n {
		r := bytes.Repeat([]byte{tag + byte(i%26)}, 30+i*37)
		copy(r, fmt.Sprintf("%c-%d-", tag, i))
		out = append(out, r)
	}
	return out
}

// cacheFileOf returns where the table of the source at path is saved.
func cacheFileOf(t testing.TB, cacheDir, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := local.New(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return cachePath(cacheDir, src.Identity().Key)
}

// builtSnapshot builds the table of the source at path without a cache.
func builtSnapshot(t testing.TB, path string) *snapshot {
	t.Helper()
	tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	return tb.s()
}

// openWithin opens path with o, failing the test if that takes longer than
// d (a cache file that hangs or floods the open).
func openWithin(t *testing.T, d time.Duration, path string, o Options) *Table {
	t.Helper()
	type res struct {
		tb  *Table
		err error
	}
	ch := make(chan res, 1)
	go func() {
		tb, err := Open(context.Background(), path, o)
		ch <- res{tb, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.tb
	case <-time.After(d):
		t.Fatalf("open did not return within %v", d)
		return nil
	}
}

// TestCacheHostileFile plants things at a source's cache path that a
// hostile user of a shared cache directory (or a bug) could leave there,
// each with the right name: the open must not hang, must not read without
// bound, and must serve every record's own bytes (built afresh).
func TestCacheHostileFile(t *testing.T) {
	cases := []struct {
		name   string
		format string // "log", "rio", "rio-zstd"
		root   bool   // needs root (chown)
		plant  func(t *testing.T, path, cf string, o Options)
	}{
		{"log record 0 at record 13's bytes", "log", false, func(t *testing.T, path, cf string, o Options) {
			s := builtSnapshot(t, path)
			lt := s.tab.(*logTable)
			lt.locs.set(0, lt.locs.off(13), lt.locs.ln(13))
			s.bytes += int64(lt.locs.ln(13)) - 30
			writePlanted(t, cf, encodeCache(s, o))
		}},
		{"log table of another file", "log", false, func(t *testing.T, path, cf string, o Options) {
			other := filepath.Join(t.TempDir(), "other.log")
			recfile.WriteLog(t, other, hostileRecords(40, 'z')[5:])
			s, mine := builtSnapshot(t, other), builtSnapshot(t, path)
			s.id, s.size = mine.id, mine.size
			writePlanted(t, cf, encodeCache(s, o))
		}},
		{"rio item 0 at item 1's bytes", "rio", false, func(t *testing.T, path, cf string, o Options) {
			s := builtSnapshot(t, path)
			rt := s.tab.(*rioTable)
			rt.ioff.set(0, rt.ioff.at(1))
			rt.ilen.set(0, rt.ilen.at(1))
			writePlanted(t, cf, encodeCache(s, o))
		}},
		{"zstd rio items shifted", "rio-zstd", false, func(t *testing.T, path, cf string, o Options) {
			s := builtSnapshot(t, path)
			// Every item of the first block one byte further: structurally
			// sound, wrong bytes.
			rt := s.tab.(*rioTable)
			rt.ioff.set(0, rt.ioff.at(0)+1)
			for i := int64(1); i < rt.blocks[1].first; i++ {
				rt.ioff.set(i, rt.ioff.at(i-1)+rt.ilen.at(i-1))
			}
			writePlanted(t, cf, encodeCache(s, o))
		}},
		{"symlink to /dev/zero", "log", false, func(t *testing.T, _, cf string, _ Options) {
			if err := os.Symlink("/dev/zero", cf); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", "log", false, func(t *testing.T, _, cf string, _ Options) {
			if err := syscall.Mkfifo(cf, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"sparse 1 TiB file", "log", false, func(t *testing.T, _, cf string, _ Options) {
			if err := os.WriteFile(cf, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(cf, 1<<40); err != nil {
				t.Fatal(err)
			}
		}},
		{"valid table writable by others", "log", false, func(t *testing.T, path, cf string, o Options) {
			s := builtSnapshot(t, path)
			writePlanted(t, cf, encodeCache(s, o))
			if err := os.Chmod(cf, 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{"valid table of another owner", "log", true, func(t *testing.T, path, cf string, o Options) {
			s := builtSnapshot(t, path)
			writePlanted(t, cf, encodeCache(s, o))
			if err := os.Lchown(cf, 1001, 1001); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			dir, cacheDir := t.TempDir(), t.TempDir()
			recs := hostileRecords(40, 'a')
			path := filepath.Join(dir, "src")
			writeSource(t, path, c.format, recs)
			o := Options{CacheDir: cacheDir}
			cf := cacheFileOf(t, cacheDir, path)
			c.plant(t, path, cf, o)
			tb := openWithin(t, 10*time.Second, path, o)
			defer tb.Close()
			if src := tb.Info().Loaded; src != "built" {
				t.Errorf("table %q, want built", src)
			}
			if tb.Len() != int64(len(recs)) {
				t.Fatalf("%d records, want %d", tb.Len(), len(recs))
			}
			for n, want := range recs {
				if got := readRecord(t, tb, int64(n)); !bytes.Equal(got, want) {
					t.Fatalf("record %d: %q..., want %q...", n, got[:min(len(got), 12)], want[:12])
				}
			}
		})
	}
}

// writePlanted writes b at cf as the current user, 0600.
func writePlanted(t *testing.T, cf string, b []byte) {
	t.Helper()
	if err := os.WriteFile(cf, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sharedCacheDir makes dir/shared, a cache directory everyone may write
// to (1777, as /tmp is), and returns its path.
func sharedCacheDir(t *testing.T, dir string) string {
	t.Helper()
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	return shared
}

// TestCacheSharedDir: in a cache directory others may write to (1777),
// tables go to a per-user subdirectory made 0700, files 0600, and load
// back from there.
func TestCacheSharedDir(t *testing.T) {
	dir := t.TempDir()
	shared := sharedCacheDir(t, dir)
	path := filepath.Join(dir, "x.log")
	recs := hostileRecords(20, 'a')
	recfile.WriteLog(t, path, recs)
	o := Options{CacheDir: shared}
	for i, want := range []string{"built", "cached"} {
		tb, err := Open(context.Background(), path, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := tb.Info().Loaded; got != want {
			t.Errorf("open %d: table %s, want %s", i, got, want)
		}
		tb.Close()
	}
	if direct, _ := filepath.Glob(filepath.Join(shared, "*.idx")); len(direct) != 0 {
		t.Errorf("tables saved straight into the shared directory: %v", direct)
	}
	sub := filepath.Join(shared, fmt.Sprintf("recfs-%d", os.Geteuid()))
	fi, err := os.Lstat(sub)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("per-user directory %v, want a 0700 directory", fi.Mode())
	}
	files, _ := filepath.Glob(filepath.Join(sub, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("%d tables in %s, want 1", len(files), sub)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("table file mode %v (%v), want 0600", fi.Mode(), err)
	}
}

// TestCacheSharedDirSquatted: another user made our per-user directory (or
// owns the cache directory): nothing is loaded from it or saved into it,
// and the source is still served.
func TestCacheSharedDirSquatted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	dir := t.TempDir()
	shared := sharedCacheDir(t, dir)
	path := filepath.Join(dir, "x.log")
	recs := hostileRecords(20, 'a')
	recfile.WriteLog(t, path, recs)
	// A valid table, planted by the squatter in "our" directory.
	sub := filepath.Join(shared, fmt.Sprintf("recfs-%d", os.Geteuid()))
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(sub, filepath.Base(cacheFileOf(t, shared, path)))
	writePlanted(t, cf, encodeCache(builtSnapshot(t, path), Options{}))
	for _, p := range []string{cf, sub} {
		if err := os.Lchown(p, 1001, 1001); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		tb, err := Open(context.Background(), path, Options{CacheDir: shared})
		if err != nil {
			t.Fatal(err)
		}
		if got := tb.Info().Loaded; got != "built" {
			t.Errorf("open %d: table %s from a directory of another user", i, got)
		}
		for n, want := range recs {
			if got := readRecord(t, tb, int64(n)); !bytes.Equal(got, want) {
				t.Fatalf("record %d wrong", n)
			}
		}
		tb.Close()
	}
	if files, _ := filepath.Glob(filepath.Join(sub, "*")); len(files) != 1 {
		t.Errorf("files in the squatted directory: %v, want only the planted one", files)
	}
	// A cache directory of another user, not shared: a subdirectory of ours
	// is used, never the directory itself.
	foreign := filepath.Join(dir, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Lchown(foreign, 1001, 1001)
	tb, err := Open(context.Background(), path, Options{CacheDir: foreign})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	if direct, _ := filepath.Glob(filepath.Join(foreign, "*.idx")); len(direct) != 0 {
		t.Errorf("tables saved straight into another user's directory: %v", direct)
	}
}

// TestCacheNewDirPrivate: a cache directory recfs makes is 0700.
func TestCacheNewDirPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	recfile.WriteLog(t, path, hostileRecords(5, 'a'))
	cacheDir := filepath.Join(dir, "new", "cache")
	tb, err := Open(context.Background(), path, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	fi, err := os.Stat(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("new cache directory %v, want 0700", fi.Mode().Perm())
	}
}
