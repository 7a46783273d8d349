package index

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// benchBytes is the log size benchmarks use: RECFS_BENCH_BYTES, default 64 MiB
// (make bench sets 1 GiB).
func benchBytes() int64 {
	if v, err := strconv.ParseInt(os.Getenv("RECFS_BENCH_BYTES"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 64 << 20
}

// benchLog writes a log of records of recSize bytes, about total bytes long,
// to a temp file and returns its path.
func benchLog(b *testing.B, total int64, recSize int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := leveldb.NewWriter(f, leveldb.WriterOptions{})
	p := bytes.Repeat([]byte("0123456789abcdef"), recSize/16+1)[:recSize]
	for w.Offset() < total {
		p[0]++
		if _, err := w.WriteRecord(p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkBuild measures index build throughput beside a plain sequential
// read of the same file (sub-benchmark "read"), so the ratio comes from one
// run. Target: build ≥ 60% of read.
func BenchmarkBuild(b *testing.B) {
	for _, rs := range []int{1024, 65536} {
		path := benchLog(b, benchBytes(), rs)
		fi, _ := os.Stat(path)
		name := strconv.Itoa(rs/1024) + "KiB"
		b.Run(name+"/read", func(b *testing.B) {
			b.SetBytes(fi.Size())
			buf := make([]byte, 1<<20)
			for b.Loop() {
				f, _ := os.Open(path)
				for {
					if _, err := f.Read(buf); err == io.EOF {
						break
					}
				}
				f.Close()
			}
		})
		for _, par := range []int{1, 0} {
			label := "/build-parallel"
			if par == 1 {
				label = "/build-sequential"
			}
			b.Run(name+label, func(b *testing.B) {
				b.SetBytes(fi.Size())
				for b.Loop() {
					t, err := Open(context.Background(), path, Options{CacheDir: "-", Parallel: par})
					if err != nil {
						b.Fatal(err)
					}
					t.Close()
				}
			})
		}
	}
}

// BenchmarkLoad measures loading a saved table of 1M records (target < 100 ms).
func BenchmarkLoad(b *testing.B) {
	n := 1_000_000
	path := benchLog(b, int64(n)*(100+7), 100)
	cacheDir := b.TempDir()
	t, err := Open(context.Background(), path, Options{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(t.Len()), "records")
	t.Close()
	for b.Loop() {
		t, err := Open(context.Background(), path, Options{CacheDir: cacheDir})
		if err != nil || t.Info().Loaded != "cached" {
			b.Fatalf("load: %v %q", err, t.Info().Loaded)
		}
		t.Close()
	}
}

// BenchmarkBytesPerRecord reports the heap a table of 10M small records
// keeps (target ≤ 16 bytes per record). Set RECFS_BENCH_RECORDS to change n.
func BenchmarkBytesPerRecord(b *testing.B) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("RECFS_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	path := benchLog(b, int64(n)*(10+7), 10)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		t, err := Open(context.Background(), path, Options{CacheDir: "-"})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(t.Len()), "B/record")
		b.ReportMetric(float64(t.Len()), "records")
		t.Close()
	}
}

// BenchmarkReadAtRandom measures random 4 KiB reads inside 64 KiB records.
func BenchmarkReadAtRandom(b *testing.B) {
	path := benchLog(b, 64<<20, 65536)
	t, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	p := make([]byte, 4096)
	b.SetBytes(int64(len(p)))
	i := int64(0)
	for b.Loop() {
		i = (i*7919 + 13) % t.Len()
		if _, err := t.ReadAt(i, p, (i*4099)%(65536-4096)); err != nil {
			b.Fatal(err)
		}
	}
}
