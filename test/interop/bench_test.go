package interop

// Peer benchmarks: recfs's scanners against the reference readers and a
// plain sequential read of the same file, page cache warm. The file size is
// RECFS_BENCH_BYTES (default 64 MiB); each file is written once per run into
// a temporary directory.

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	recfsldb "github.com/recfs/recfs/codec/leveldb"
	recfsrio "github.com/recfs/recfs/codec/recordio"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/grailbio/base/recordio"
	"github.com/recfs/recfs/codec"
	"github.com/syndtr/goleveldb/leveldb/journal"
)

// benchBytes is the approximate size of every benchmark file.
func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("RECFS_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("RECFS_BENCH_BYTES=%q: want a positive byte count", s)
		}
		return n
	}
	return 64 << 20
}

var (
	benchMu    sync.Mutex
	benchDir   string
	benchFiles = map[string]benchFile{}
)

// benchFile is a file written for the benchmarks and what it holds.
type benchFile struct {
	path  string
	size  int64
	count int // records or items
}

// cleanupBench removes the benchmark files; TestMain calls it.
func cleanupBench() {
	benchMu.Lock()
	defer benchMu.Unlock()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
}

// benchPool is random bytes records are sliced from, half of each record
// then repeated so compressors have something to do.
var benchPool = func() []byte {
	p := make([]byte, 1<<20+1<<17)
	rand.New(rand.NewSource(1)).Read(p)
	return p
}()

// benchRecord returns record i of length n (a view into a shared buffer
// that the writer copies or consumes before the next call).
func benchRecord(buf []byte, i, n int) []byte {
	buf = buf[:n]
	off := (i * 4099) % (len(benchPool) - n)
	half := n / 2
	copy(buf, benchPool[off:off+half])
	for k := half; k < n; k++ {
		buf[k] = byte('a' + k%7)
	}
	return buf
}

// getBenchFile writes (once per run) a file named key with write, which
// returns the number of records written.
func getBenchFile(b *testing.B, key string, write func(w io.Writer) (int, error)) benchFile {
	benchMu.Lock()
	defer benchMu.Unlock()
	if f, ok := benchFiles[key]; ok {
		return f
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "recfs-interop-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	path := filepath.Join(benchDir, key)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatalf("writing %s: %v", key, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	bf := benchFile{path: path, size: st.Size(), count: n}
	warm(b, bf)
	benchFiles[key] = bf
	return bf
}

// warm reads the file once so the page cache holds it.
func warm(b *testing.B, bf benchFile) {
	f, err := os.Open(bf.path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		b.Fatal(err)
	}
}

// plainRead reads the whole file with os.File.Read into a 1 MiB buffer.
func plainRead(b *testing.B, bf benchFile) {
	buf := make([]byte, 1<<20)
	b.SetBytes(bf.size)
	for b.Loop() {
		f, err := os.Open(bf.path)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for {
			k, err := f.Read(buf)
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
		if n != bf.size {
			b.Fatalf("read %d bytes of %d", n, bf.size)
		}
	}
}

// openBench opens a benchmark file for one iteration.
func openBench(b *testing.B, bf benchFile) *os.File {
	f, err := os.Open(bf.path)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// runPass runs the benchmark name/who: pass reads the opened file bf once
// and returns how many records it found, which must be bf.count. With an
// item size, it also reports the decoded item rate (reportItemRate).
func runPass(b *testing.B, name, who string, bf benchFile, pass func(f *os.File) (int, error), itemSize ...int) {
	b.Run(name+"/"+who, func(b *testing.B) {
		b.SetBytes(bf.size)
		for b.Loop() {
			f := openBench(b, bf)
			n, err := pass(f)
			f.Close()
			if err != nil {
				b.Fatal(who, err)
			}
			wantCount(b, who, n, bf.count)
		}
		for _, size := range itemSize {
			reportItemRate(b, bf, size)
		}
	})
}

// scanCount drives a recfs scanner to its end and counts its records; a
// scan that fails or reports damage is an error.
func scanCount[S interface {
	Next() bool
	Err() error
	Damage() []codec.Damage
}](sc S) (int, error) {
	n := 0
	for sc.Next() {
		n++
	}
	if err := sc.Err(); err != nil || len(sc.Damage()) > 0 {
		return n, fmt.Errorf("scan: %v, damage %v", err, sc.Damage())
	}
	return n, nil
}

// readerCount counts the records a reference reader's next yields (see
// eachRecord), reading each to its end.
func readerCount(next func() (io.Reader, error)) (int, error) {
	n := 0
	err := eachRecord(next, func(r io.Reader) error {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

func wantCount(b *testing.B, who string, got, want int) {
	if got != want {
		b.Fatalf("%s returned %d records, want %d", who, got, want)
	}
}

// BenchmarkLeveldbScan scans a leveldb log of 1 KiB and of 64 KiB records:
// recfs's LogScanner (every chunk checksummed, no payload copy), pebble v2's
// record.Reader and goleveldb's journal.Reader (Next + io.Copy to
// io.Discard), and a plain sequential read of the file.
func BenchmarkLeveldbScan(b *testing.B) {
	total := benchBytes(b)
	for _, recSize := range []int{1 << 10, 64 << 10} {
		key := fmt.Sprintf("leveldb-%d-%d.log", recSize, total)
		bf := getBenchFile(b, key, func(w io.Writer) (int, error) {
			lw := journal.NewWriter(w)
			buf := make([]byte, recSize)
			n := 0
			for written := int64(0); written < total; n++ {
				jw, err := lw.Next()
				if err != nil {
					return n, err
				}
				if _, err := jw.Write(benchRecord(buf, n, recSize)); err != nil {
					return n, err
				}
				written += int64(recSize) + logHeader
			}
			return n, lw.Close()
		})
		name := fmt.Sprintf("rec=%dKiB", recSize>>10)
		runPass(b, name, "recfs", bf, func(f *os.File) (int, error) {
			return scanCount(recfsldb.NewScanner(f, bf.size, recfsldb.Options{}))
		})
		runPass(b, name, "pebble", bf, func(f *os.File) (int, error) {
			r := record.NewReader(f, 0)
			return readerCount(r.Next)
		})
		runPass(b, name, "goleveldb", bf, func(f *os.File) (int, error) {
			r := journal.NewReader(f, nil, false, true)
			return readerCount(r.Next)
		})
		b.Run(name+"/read", func(b *testing.B) { plainRead(b, bf) })
	}
}

// BenchmarkRecordIOScan scans a recordio file of 1 KiB items (1024 items a
// block), plain and zstd: recfs's RecordIOScanner (chunks checksummed,
// blocks decoded, item boundaries found, no payload copy) against
// grailbio's Scanner (Scan + Get), and a plain sequential read.
func BenchmarkRecordIOScan(b *testing.B) {
	total := benchBytes(b)
	const itemSize = 1 << 10
	for _, xf := range []string{"plain", "zstd"} {
		var transformers []string
		if xf != "plain" {
			transformers = []string{xf}
		}
		key := fmt.Sprintf("recordio-%s-%d.rio", xf, total)
		bf := getBenchFile(b, key, func(w io.Writer) (int, error) {
			rw := recordio.NewWriter(w, recordio.WriterOpts{Transformers: transformers, MaxItems: 1023})
			n := 0
			for written := int64(0); written < total; n++ {
				rw.Append(benchRecord(make([]byte, itemSize), n, itemSize))
				written += itemSize
			}
			return n, rw.Finish()
		})
		runPass(b, xf, "recfs", bf, func(f *os.File) (int, error) {
			sc, err := recfsrio.NewScanner(f, bf.size, codec.RecordIO, recfsrio.Options{})
			if err != nil {
				return 0, err
			}
			return scanCount(sc)
		}, itemSize)
		runPass(b, xf, "grailbio", bf, func(f *os.File) (int, error) {
			sc := recordio.NewScanner(f, recordio.ScannerOpts{})
			n := 0
			for sc.Scan() {
				_ = sc.Get()
				n++
			}
			return n, sc.Finish()
		}, itemSize)
		b.Run(xf+"/read", func(b *testing.B) { plainRead(b, bf) })
	}
}

// reportItemRate adds the decoded item throughput, which differs from the
// file throughput (MB/s) when the blocks are compressed.
func reportItemRate(b *testing.B, bf benchFile, itemSize int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(bf.count)*float64(itemSize)*float64(b.N)/s/1e6, "item-MB/s")
	}
}
