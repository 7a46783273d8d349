package index

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/kafka"
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

// TestKafkaBuildAllocates: a parallel build of a segment of many small
// records allocates its record table about once (chunks joined per part,
// at most a chunk of room more per part) beside the scanners' windows:
// not the doubling and the merge copy of growing slices, which cost ~3
// times the table and the page faults and collections that go with it.
func TestKafkaBuildAllocates(t *testing.T) {
	var file []byte
	n := 0
	for off := int64(0); len(file) < 8<<20; off += 500 {
		rs := make([]codectest.KafkaRecord, 500)
		for i := range rs {
			rs[i] = codectest.KafkaRecord{Key: []byte("k"), Value: fmt.Appendf(nil, "v%07d", n)}
			n++
		}
		file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: -1})...)
	}
	const parts = 2
	r := bytes.NewReader(file)
	build := func() {
		tb, err := Build(context.Background(), r, int64(len(file)), Options{CacheDir: "-", Parallel: parts})
		if err != nil {
			t.Fatal(err)
		}
		if tb.Len() != int64(n) {
			t.Fatalf("%d records, want %d", tb.Len(), n)
		}
		tb.Close()
	}
	build()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	build()
	runtime.ReadMemStats(&after)
	table := uint64(n) * uint64(unsafe.Sizeof(kRec{}))
	bound := table + parts*(chunkLen*uint64(unsafe.Sizeof(kRec{}))+kafka.DefaultWindow) + 1<<20
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Errorf("the build of %d records allocated %d bytes, want at most %d (table %d)", n, got, bound, table)
	}
}
