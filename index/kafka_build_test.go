package index

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// BenchmarkKafkaBuild builds the table of a 64 MiB segment of uncompressed
// batches of 200 records of 1 KiB values, read by pread (a bytes.Reader),
// as a local segment's build reads it.
func BenchmarkKafkaBuild(b *testing.B) {
	var file []byte
	val := bytes.Repeat([]byte("v"), 1024)
	n := 0
	for off := int64(0); len(file) < 64<<20; off += 200 {
		rs := make([]codectest.KafkaRecord, 200)
		for i := range rs {
			rs[i] = codectest.KafkaRecord{Key: fmt.Appendf(nil, "user-%d", n), Value: val, TimestampDelta: int64(i)}
			n++
		}
		file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: -1})...)
	}
	r := bytes.NewReader(file)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		t, err := Build(context.Background(), r, int64(len(file)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if t.Len() != int64(n) {
			b.Fatalf("%d records, want %d", t.Len(), n)
		}
		t.Close()
	}
}

// TestKafkaBuildUnmapped: the build of a mapped Kafka segment reads every
// byte by pread (Unmapped) into its scanners' windows, none through the
// map, whose page faults cost more than the copy.
func TestKafkaBuildUnmapped(t *testing.T) {
	t.Parallel()
	seg, values := kafkaSegment(t, 12, 40)
	m := &countingMap{b: seg}
	tb, err := Build(context.Background(), m, int64(len(seg)), Options{Format: codec.Kafka, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Len() != int64(len(values)) {
		t.Fatalf("%d records, want %d", tb.Len(), len(values))
	}
	if s, r := m.sliced.Load(), m.readAt.Load(); s != 0 || r != 0 {
		t.Errorf("the build read %d bytes through the map (Slice) and %d by its ReadAt, want 0", s, r)
	}
	if u := m.unmappedReadings.Load(); u < int64(len(seg)) {
		t.Errorf("the build read %d bytes by pread, want the segment's %d", u, len(seg))
	}
}
