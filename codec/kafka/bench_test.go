package kafka

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// benchSegment returns a segment of batches of 100 records of about
// recLen bytes each (JSON-like, so compression has something to do),
// totalling about size bytes before compression.
func benchSegment(b *testing.B, size, recLen int, c Compression) ([]byte, int) {
	var file []byte
	off, n := int64(0), 0
	rec := bytes.Repeat([]byte("x"), recLen)
	for bi := 0; len(file) < size; bi++ {
		rs := make([]codectest.KafkaRecord, 100)
		for i := range rs {
			v := append(fmt.Appendf(nil, `{"id":%d,"batch":%d,"pad":"`, n+i, bi), rec[:recLen-40]...)
			rs[i] = codectest.KafkaRecord{Key: fmt.Appendf(nil, "key-%d", n+i), Value: append(v, '"', '}'), TimestampDelta: int64(i)}
		}
		spec := codectest.KafkaBatchSpec{BaseOffset: off, Attr: int16(c), Records: rs, ProducerID: 1}
		if c != None {
			spec.Compress = compressor(b, c, false)
		}
		file = append(file, codectest.KafkaBatch(spec)...)
		off += 100
		n += 100
	}
	return file, n
}

// mapped hands out its bytes without copying, as a mapped file does.
type mapped []byte

func (m mapped) ReadAt(p []byte, off int64) (int, error) { return bytes.NewReader(m).ReadAt(p, off) }
func (m mapped) Slice(off, n int64) ([]byte, error)      { return m[off : off+n], nil }

func benchScan(b *testing.B, c Compression) {
	file, n := benchSegment(b, 32<<20, 200, c)
	r := mapped(file)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewScanner(r, int64(len(file)), Options{})
		k := 0
		for s.Next() {
			k++
		}
		if k != n || s.Err() != nil {
			b.Fatal(k, s.Err())
		}
	}
}

// BenchmarkScan scans 32 MiB of uncompressed batches of 200-byte records
// (from memory, as from a mapped file), verifying every checksum and
// parsing every record.
func BenchmarkScan(b *testing.B) { benchScan(b, None) }

// BenchmarkScanZstd scans the same records in zstd batches (SetBytes
// counts the compressed file).
func BenchmarkScanZstd(b *testing.B) { benchScan(b, Zstd) }

// BenchmarkScanLZ4 scans the same records in lz4 batches.
func BenchmarkScanLZ4(b *testing.B) { benchScan(b, LZ4) }

// BenchmarkReadBatch reads, verifies and decompresses one zstd batch of
// 100 records (SetBytes counts the decompressed bytes).
func BenchmarkReadBatch(b *testing.B) {
	file, _ := benchSegment(b, 1, 200, Zstd)
	r := bytes.NewReader(file)
	data, err := ReadBatch(r, 0, int64(len(file)), nil, DefaultMaxDecoded)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	buf := make([]byte, 0, len(file))
	for b.Loop() {
		if _, err := ReadBatch(r, 0, int64(len(file)), buf, DefaultMaxDecoded); err != nil {
			b.Fatal(err)
		}
	}
}
