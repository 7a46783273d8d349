package recordio

import (
	"bytes"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/recfs/recfs/codec"
)

// benchBytes is the payload size of benchmark files: RECFS_BENCH_BYTES or 64 MiB.
func benchBytes(b *testing.B) int {
	if s := os.Getenv("RECFS_BENCH_BYTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("bad RECFS_BENCH_BYTES %q", s)
		}
		return n
	}
	return 64 << 20
}

// benchFile writes about total bytes of compressible items of 100..4000
// bytes with the given transformers.
func benchFile(b *testing.B, xf []string, total int) ([]byte, int) {
	rng := rand.New(rand.NewSource(1))
	words := [][]byte{[]byte("recordio "), []byte("chunk "), []byte("block "), []byte("fuse "), []byte("trailer ")}
	var out bytes.Buffer
	w, err := NewWriter(&out, WriterOptions{Transformers: xf})
	if err != nil {
		b.Fatal(err)
	}
	payload, n := 0, 0
	item := make([]byte, 0, 4096)
	for payload < total {
		item = item[:0]
		sz := 100 + rng.Intn(3900)
		for len(item) < sz {
			if rng.Intn(4) == 0 {
				item = append(item, byte(rng.Intn(256)))
			} else {
				item = append(item, words[rng.Intn(len(words))]...)
			}
		}
		if _, err := w.Append(item); err != nil {
			b.Fatal(err)
		}
		payload += len(item)
		n++
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return out.Bytes(), payload
}

// BenchmarkRecordIOScan measures a full scan with CRC verification (and
// decompression of every block for transformed files); SetBytes is the
// item payload, so the figure is decoded bytes per second.
func BenchmarkRecordIOScan(b *testing.B) {
	for _, c := range []struct {
		name string
		xf   []string
	}{{"plain", nil}, {"zstd", []string{"zstd"}}, {"flate", []string{"flate"}}} {
		b.Run(c.name, func(b *testing.B) {
			data, payload := benchFile(b, c.xf, benchBytes(b))
			b.SetBytes(int64(payload))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for s.Next() {
					n++
				}
				if n == 0 || len(s.Damage()) > 0 || s.Err() != nil {
					b.Fatalf("%d items, damage %v, err %v", n, s.Damage(), s.Err())
				}
			}
		})
	}
}

// BenchmarkRecordIOReadItem reads every item of a file in order through
// the reader; SetBytes is the item payload.
func BenchmarkRecordIOReadItem(b *testing.B) {
	for _, c := range []struct {
		name string
		xf   []string
	}{{"plain", nil}, {"zstd", []string{"zstd"}}} {
		b.Run(c.name, func(b *testing.B) {
			data, payload := benchFile(b, c.xf, min(benchBytes(b), 16<<20))
			s, _ := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{})
			var locs []ItemLoc
			for s.Next() {
				locs = append(locs, s.Item())
			}
			buf := make([]byte, 4096)
			b.SetBytes(int64(payload))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rd, _ := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, c.xf, Options{}, 8)
				for _, l := range locs {
					if _, err := rd.ReadItem(l, buf[:l.Len], 0); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
