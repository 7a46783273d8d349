package leveldb

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// benchLogFile writes data to a temporary file, so that the scan and the
// baseline read pay the same system-call and page-cache costs as the index
// does on real logs.
func benchLogFile(b *testing.B, data []byte) *os.File {
	f, err := os.Create(filepath.Join(b.TempDir(), "bench.log"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// benchLogBytes is the size of the logs the benchmarks scan: the
// RECFS_BENCH_BYTES environment variable, 64 MiB by default.
func benchLogBytes(b *testing.B) int {
	if s := os.Getenv("RECFS_BENCH_BYTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("RECFS_BENCH_BYTES=%q", s)
		}
		return n
	}
	return 64 << 20
}

var benchLogs sync.Map // "recsize/total" -> []byte

// benchLog returns an in-memory log of about total bytes of records of
// recSize bytes.
func benchLog(b *testing.B, recSize, total int) []byte {
	key := strconv.Itoa(recSize) + "/" + strconv.Itoa(total)
	if v, ok := benchLogs.Load(key); ok {
		return v.([]byte)
	}
	var out bytes.Buffer
	out.Grow(total + total/100)
	w := NewWriter(&out, WriterOptions{})
	rec := codectest.VectorPayload(1, recSize)
	for w.Offset() < int64(total) {
		if _, err := w.WriteRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	benchLogs.Store(key, out.Bytes())
	return out.Bytes()
}

var benchRecSizes = []struct {
	name string
	size int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}}

// BenchmarkLogScan measures a whole-file scan (checksums included) of a log
// in a (page-cached) file.
func BenchmarkLogScan(b *testing.B) {
	for _, rs := range benchRecSizes {
		b.Run(rs.name, func(b *testing.B) {
			data := benchLog(b, rs.size, benchLogBytes(b))
			r := benchLogFile(b, data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := NewScanner(r, int64(len(data)), Options{})
				n := 0
				for s.Next() {
					n++
				}
				if s.Err() != nil || len(s.Damage()) != 0 || n == 0 {
					b.Fatal(s.Err(), s.Damage())
				}
			}
		})
	}
}

// BenchmarkSequentialRead is the baseline for BenchmarkLogScan: plain ReadAt
// over the same file with the scanner's read size.
func BenchmarkSequentialRead(b *testing.B) {
	for _, rs := range benchRecSizes {
		b.Run(rs.name, func(b *testing.B) {
			data := benchLog(b, rs.size, benchLogBytes(b))
			r := benchLogFile(b, data)
			buf := make([]byte, logWindowBlocks*logBlockSize)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var sum byte
				for off := int64(0); off < int64(len(data)); off += int64(len(buf)) {
					n, _ := r.ReadAt(buf, off)
					sum += buf[n-1]
				}
				_ = sum
			}
		})
	}
}

// BenchmarkLogWrite measures Writer framing records into a discarding
// destination.
func BenchmarkLogWrite(b *testing.B) {
	for _, rs := range benchRecSizes {
		b.Run(rs.name, func(b *testing.B) {
			rec := codectest.VectorPayload(1, rs.size)
			w := NewWriter(io.Discard, WriterOptions{})
			b.SetBytes(int64(rs.size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := w.WriteRecord(rec); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkLogRead4K measures 4 KiB random-ish reads from a 64 MiB record.
func BenchmarkLogRead4K(b *testing.B) {
	data := benchLog(b, 64<<20, 64<<20)
	r := bytes.NewReader(data)
	rec := Record{Off: 0, Len: 64 << 20, Hdr: 7}
	p := make([]byte, 4096)
	b.SetBytes(4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64(i*7919*4096) % (rec.Len - 4096)
		if _, err := ReadRecord(r, rec, p, off, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
