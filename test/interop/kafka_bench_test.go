package interop

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/test/internal/franzwalk"
)

// kafkaBenchSegment returns a segment of about benchBytes of 1 KiB values
// in batches of 200 written with franz-go, compressed with codec c (0:
// none), and its record count.
func kafkaBenchSegment(b *testing.B, c int8) ([]byte, int) {
	var seg []byte
	rng := rand.New(rand.NewSource(26))
	words := strings.Fields("order customer total item price shipped pending paid refund the a of and to in is for on with")
	n := 0
	for int64(len(seg)) < benchBytes(b) {
		batch := kBatch{Magic: 2, Codec: c, Base: int64(n), Timestamp: 1700000000000, ProducerID: -1, ProducerEpoch: -1}
		for i := range 200 {
			// About 1 KiB of JSON-ish text that compresses as logs do
			// (some 3 to 5 times).
			val := fmt.Appendf(nil, `{"order":%d,"note":"`, n+i)
			for len(val) < 1000 {
				val = append(append(val, words[rng.Intn(len(words))]...), ' ')
				val = strconv.AppendInt(val, rng.Int63n(1e6), 36)
				val = append(val, ' ')
			}
			val = append(val, `"}`...)
			batch.Recs = append(batch.Recs, kRec{Offset: int64(n + i), Timestamp: 1700000000000 + int64(i), Key: fmt.Appendf(nil, "user-%d", n+i), Value: val})
		}
		seg = franzV2(b, seg, batch)
		n += 200
	}
	return seg, n
}

// mapped hands out its bytes without copying, as a mapped file does (an
// index.Open of a local file reads through a mapping); franz-go walks the
// same bytes in memory.
type mapped struct {
	*bytes.Reader
	b []byte
}

func (m mapped) Slice(off, n int64) ([]byte, error) { return m.b[off : off+n], nil }

func benchKafka(b *testing.B, c int8, recfs bool) {
	seg, n := kafkaBenchSegment(b, c)
	b.SetBytes(int64(len(seg)))
	for b.Loop() {
		var k int64
		if recfs {
			tb, err := index.Build(context.Background(), mapped{bytes.NewReader(seg), seg}, int64(len(seg)), index.Options{Format: codec.Kafka, CacheDir: "-"})
			if err != nil {
				b.Fatal(err)
			}
			k = tb.Len()
		} else {
			kk, err := franzwalk.Walk(seg, nil)
			if err != nil {
				b.Fatal(err)
			}
			k = int64(kk)
		}
		if k != int64(n) {
			b.Fatalf("%d records, want %d", k, n)
		}
	}
}

// BenchmarkKafkaScanRecfs builds recfs's table of an uncompressed
// segment (every checksum verified, every record located).
func BenchmarkKafkaScanRecfs(b *testing.B) { benchKafka(b, 0, true) }

// BenchmarkKafkaScanFranz walks the same segment with franz-go.
func BenchmarkKafkaScanFranz(b *testing.B) { benchKafka(b, 0, false) }

// BenchmarkKafkaScanZstdRecfs is BenchmarkKafkaScanRecfs for zstd batches.
func BenchmarkKafkaScanZstdRecfs(b *testing.B) { benchKafka(b, 4, true) }

// BenchmarkKafkaScanZstdFranz is BenchmarkKafkaScanFranz for zstd batches.
func BenchmarkKafkaScanZstdFranz(b *testing.B) { benchKafka(b, 4, false) }
