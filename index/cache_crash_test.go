package index

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestSaveCacheNoFsync: a cache save fsyncs nothing (see
// writeCacheFileWith: a torn saved table costs a rebuild, while fsyncs
// would slow every command that saves). The save runs in a child test
// process under strace, which counts every sync system call it makes;
// the setting must not regress, so the count is checked, not timed.
func TestSaveCacheNoFsync(t *testing.T) {
	if dir := os.Getenv("RECFS_TEST_SAVE_CACHE"); dir != "" {
		saveForStrace(t, dir)
		return
	}
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed (.ci/run installs it): cannot count a save's fsyncs")
	}
	dir := t.TempDir()
	recfile.WriteLog(t, filepath.Join(dir, "src"), hostileRecords(20, 'a'))
	if err := os.Mkdir(filepath.Join(dir, "cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace,
		"-e", "trace=fsync,fdatasync,syncfs,sync,sync_file_range",
		os.Args[0], "-test.run=^TestSaveCacheNoFsync$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RECFS_TEST_SAVE_CACHE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("save under strace: %v\n%s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var syncs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "sync") && !strings.Contains(l, "+++") && !strings.Contains(l, "---") {
			syncs = append(syncs, l)
		}
	}
	if len(syncs) != 0 {
		t.Fatalf("a cache save made %d sync calls, want none:\n%s", len(syncs), strings.Join(syncs, "\n"))
	}
}

// saveForStrace is TestSaveCacheNoFsync's child: it builds the table of
// dir/src, saves it into dir/cache and checks that the saved table loads.
func saveForStrace(t *testing.T, dir string) {
	s := builtSnapshot(t, filepath.Join(dir, "src"))
	cf := filepath.Join(dir, "cache", "x.idx")
	if err := saveCache(context.Background(), cf, s, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCache(context.Background(), cf, s.id, Options{}); err != nil {
		t.Fatalf("the saved table does not load: %v", err)
	}
}

// crashShapes are what a crash (or a disk) can leave of a cache file of
// b's bytes under its name.
var crashShapes = []struct {
	name  string
	shape func(b []byte) []byte
}{
	{"empty", func(b []byte) []byte { return nil }},
	{"zeroed", func(b []byte) []byte { return make([]byte, len(b)) }},
	{"second half zeroed", func(b []byte) []byte {
		return append(bytes.Clone(b[:len(b)/2]), make([]byte, len(b)-len(b)/2)...)
	}},
	{"cut short", func(b []byte) []byte { return bytes.Clone(b[:len(b)*2/3]) }},
	{"last byte lost", func(b []byte) []byte { return bytes.Clone(b[:len(b)-1]) }},
}

// savedIndexLines returns the log entries that name the saved index cf.
func savedIndexLines(h *logtest.Hook, cf string) []*logrus.Entry {
	var out []*logrus.Entry
	for _, e := range h.AllEntries() {
		if e.Data["saved_index"] == cf {
			out = append(out, e)
		}
	}
	return out
}

// TestCacheTornRebuilt: a cache file left torn, zeroed or cut short (by a
// crash before saves were fsynced, or by a disk) costs a rebuild: the
// open scans the source, logs one line naming the saved index, serves
// every record's own bytes and saves a good table in its place, which the
// next open loads. Plain and gzip TFRecord (whose saved windows lie in
// the blob region past the checksummed body) alike.
func TestCacheTornRebuilt(t *testing.T) {
	t.Parallel()
	logs := logtest.NewGlobal()
	for _, c := range crashShapes {
		t.Run("log/"+c.name, func(t *testing.T) {
			t.Parallel()
			dir, cacheDir := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, "src")
			recs := hostileRecords(40, 'a')
			recfile.WriteLog(t, path, recs)
			o := Options{CacheDir: cacheDir}
			first, err := Open(context.Background(), path, o)
			if err != nil {
				t.Fatal(err)
			}
			first.Close()
			cf := cacheFileOf(t, cacheDir, path)
			good, err := os.ReadFile(cf)
			if err != nil {
				t.Fatal(err)
			}
			writePlanted(t, cf, c.shape(good))
			checkTornRebuilt(t, logs, cf, recs, func() *Table {
				tb, err := Open(context.Background(), path, o)
				if err != nil {
					t.Fatal(err)
				}
				return tb
			})
		})
		if c.name == "empty" || c.name == "second half zeroed" {
			continue // the gzip table's body is checked as the log table's is; its blob below
		}
		t.Run("gzip/"+c.name, func(t *testing.T) {
			t.Parallel()
			f := savedGzip(t, "mem://torn-"+strings.ReplaceAll(c.name, " ", "-")+".tfrecord.gz")
			writePlanted(t, f.cf, c.shape(f.b))
			checkTornRebuilt(t, logs, f.cf, gzipFixture().recs, func() *Table {
				tb, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
				if err != nil {
					t.Fatal(err)
				}
				return tb
			})
		})
	}
	t.Run("gzip/blob and trailer zeroed", func(t *testing.T) {
		t.Parallel()
		f := savedGzip(t, "mem://torn-blob.tfrecord.gz")
		b := bytes.Clone(f.b)
		clear(b[int64(len(b))-cacheTrailer-f.blob:])
		writePlanted(t, f.cf, b)
		checkTornRebuilt(t, logs, f.cf, gzipFixture().recs, func() *Table {
			tb, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
			if err != nil {
				t.Fatal(err)
			}
			return tb
		})
	})
}

// checkTornRebuilt opens a source whose cache file cf is torn and checks
// that the table is built afresh with one log line about cf, a sample of
// its records (sampleRecords) right, and loaded from its new cache file
// next time.
func checkTornRebuilt(t *testing.T, logs *logtest.Hook, cf string, recs [][]byte, open func() *Table) {
	t.Helper()
	tb := open()
	if got := tb.Info().Loaded; got != "built" {
		tb.Close()
		t.Fatalf("table %s, want built afresh", got)
	}
	if tb.Len() != int64(len(recs)) {
		tb.Close()
		t.Fatalf("%d records, want %d", tb.Len(), len(recs))
	}
	for _, n := range sampleRecords(len(recs)) {
		if got := readRecord(t, tb, int64(n)); !bytes.Equal(got, recs[n]) {
			tb.Close()
			t.Fatalf("record %d: other bytes", n)
		}
	}
	tb.Close()
	if lines := savedIndexLines(logs, cf); len(lines) != 1 || lines[0].Level != logrus.WarnLevel {
		t.Fatalf("log lines about the saved index: %d, want one warning", len(lines))
	}
	again := open()
	defer again.Close()
	if got := again.Info().Loaded; got != "cached" {
		t.Fatalf("next open: table %s, want the one saved in place of the torn file", got)
	}
	if lines := savedIndexLines(logs, cf); len(lines) != 1 {
		t.Fatalf("log lines about the saved index after the next open: %d, want still one", len(lines))
	}
}

// sampleRecords returns the record numbers checkTornRebuilt reads out of n:
// all of them when there are few, else the first, the last and a stride
// between (at most 8), so that a large fixture is checked across its
// whole length in a few seconds under -race.
func sampleRecords(n int) []int {
	const most = 8
	if n <= most {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	s := make([]int, 0, most)
	step := (n - 1 + most - 2) / (most - 1)
	for i := 0; i < n-1; i += step {
		s = append(s, i)
	}
	return append(s, n-1)
}
