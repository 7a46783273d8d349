package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/kafka"
)

// kafkaSegment returns a segment of batches of n records each, zstd
// batches and plain ones in turn, a transaction marker after every third,
// and the values of its data records in order.
func kafkaSegment(t testing.TB, batches, n int) ([]byte, [][]byte) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var file []byte
	var values [][]byte
	off := int64(1000)
	for b := range batches {
		rs := make([]codectest.KafkaRecord, n)
		for i := range rs {
			v := fmt.Appendf(nil, "value %d.%d %s", b, i, strings.Repeat("z", (b*7+i)%50))
			if i%9 == 4 {
				v = nil // a tombstone: reads as empty
			}
			rs[i] = codectest.KafkaRecord{Key: fmt.Appendf(nil, "k%d", i), Value: v}
			values = append(values, v)
		}
		spec := codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: 5, Attr: 0x10}
		if b%2 == 1 {
			spec.Attr |= int16(kafka.Zstd)
			spec.Compress = func(p []byte) []byte { return enc.EncodeAll(p, nil) }
		}
		file = append(file, codectest.KafkaBatch(spec)...)
		off += int64(n)
		if b%3 == 2 {
			file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Attr: 0x30, ProducerID: 5,
				Records: []codectest.KafkaRecord{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}}})...)
			off++
		}
	}
	return file, values
}

// TestKafkaTable: a segment opens as a table of its data records (control
// records left out) whose payloads are the values; a reopen loads the
// saved table; appends are refused with the reason.
func TestKafkaTable(t *testing.T) {
	file, values := kafkaSegment(t, 7, 20)
	if f, err := Detect(bytes.NewReader(file), int64(len(file))); err != nil || f != codec.Kafka {
		t.Fatalf("Detect = %v, %v", f, err)
	}
	o := Options{CacheDir: t.TempDir()}
	tb, path := openTemp(t, file, o)
	if got := readAll(t, tb); len(got) != len(values) || !equalItems(got, normal(values)) {
		t.Fatalf("%d records read back, want %d equal to the values written", len(got), len(values))
	}
	in := tb.Info()
	if in.Format != codec.Kafka || !strings.Contains(in.Flavor, "v2; none+zstd") || in.Loaded != "built" {
		t.Fatalf("info %+v", in)
	}
	tb2, err := Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Close()
	if tb2.Info().Loaded != "cached" || !equalItems(readAll(t, tb2), normal(values)) {
		t.Fatalf("reopened: %+v", tb2.Info())
	}
	for _, err := range []error{tb.CheckAppend(), func() error {
		_, err := tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{})
		return err
	}()} {
		if !errors.Is(err, ErrReadOnlyFormat) || !strings.Contains(err.Error(), "written by their broker") {
			t.Fatalf("append: %v, want ErrReadOnlyFormat with the reason", err)
		}
	}
	if st, _ := os.Stat(path); st.Size() != int64(len(file)) {
		t.Fatal("the refused append changed the file")
	}
}

// normal returns values with nil (null) values as empty ones, as the
// table serves them.
func normal(values [][]byte) [][]byte {
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = append([]byte{}, v...)
	}
	return out
}

// TestKafkaBatchReadOnce: reading every record of a segment in order, in
// pieces, reads each uncompressed batch once, not once per record or per
// read, and no compressed one: the build kept what it decompressed (the
// cache has room); a second pass reads none again.
func TestKafkaBatchReadOnce(t *testing.T) {
	file, values := kafkaSegment(t, 6, 50)
	tb, _ := openTemp(t, file, Options{CacheDir: "-"})
	before := kafkaBatchReads.Load()
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		for off := 0; off < len(b); off += 3 {
			if _, err := tb.ReadAt(i, b[off:min(off+3, len(b))], int64(off)); err != nil && err != io.EOF {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(b, values[i]) {
			t.Fatalf("record %d: %q, want %q", i, b, values[i])
		}
	}
	if n := kafkaBatchReads.Load() - before; n != 3 {
		t.Fatalf("%d batch reads for 3 uncompressed and 3 compressed data batches, want 3", n)
	}
	readAll(t, tb)
	if n := kafkaBatchReads.Load() - before; n != 3 {
		t.Fatalf("%d batch reads after a second pass, want still 3", n)
	}
}

// TestKafkaBuildKeepsFirstBatches: the build keeps the decompressed
// batches of the start of the segment only up to kafkaKeepBytes; a read of
// every record decompresses the others once each.
func TestKafkaBuildKeepsFirstBatches(t *testing.T) {
	file, values := kafkaSegment(t, 12, 50) // 6 zstd batches
	first, _ := openTemp(t, file, Options{CacheDir: "-"})
	var zstd []int64 // decompressed sizes of the zstd batches
	for _, b := range first.s().tab.(*kafkaTable).batches {
		if b.attr&0x07 != 0 {
			zstd = append(zstd, int64(b.dlen))
		}
	}
	if len(zstd) != 6 {
		t.Fatalf("%d zstd batches, want 6", len(zstd))
	}
	was := kafkaKeepBytes
	kafkaKeepBytes = zstd[0] + zstd[1] + zstd[2]/2 // room for two
	defer func() { kafkaKeepBytes = was }()
	tb, _ := openTemp(t, file, Options{CacheDir: "-"})
	before := kafkaBatchReads.Load()
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		if _, err := tb.ReadAt(i, b, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(b, values[i]) {
			t.Fatalf("record %d: %q, want %q", i, b, values[i])
		}
	}
	// 6 uncompressed batches read, 2 zstd ones kept, 4 not.
	if n := kafkaBatchReads.Load() - before; n != 10 {
		t.Fatalf("%d batch reads, want 10 (6 uncompressed, the 4 zstd ones past the 2 kept)", n)
	}
}

// TestKafkaLargeBatchInPlace: an uncompressed batch larger than the cache
// keeps is verified once and its values read in place, and a damaged one
// fails its reads instead of serving bytes.
func TestKafkaLargeBatchInPlace(t *testing.T) {
	prev := kafkaMaxCached
	kafkaMaxCached = func() int64 { return 100 }
	defer func() { kafkaMaxCached = prev }()
	file, values := kafkaSegment(t, 1, 30)
	tb, path := openTemp(t, file, Options{CacheDir: "-"})
	if !equalItems(readAll(t, tb), normal(values)) {
		t.Fatal("values differ")
	}
	// Damage the batch's last byte in place (same size, same times
	// would not do: the table notices a changed file); a fresh table of
	// the damaged file skips the batch.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb2, err := Build(context.Background(), &flipAt{r: f, at: int64(len(file) - 1)}, int64(len(file)), Options{Format: codec.Kafka})
	if err != nil {
		t.Fatal(err)
	}
	if tb2.Len() != 0 || len(tb2.Damage()) != 1 {
		t.Fatalf("damaged: %d records, damage %v", tb2.Len(), tb2.Damage())
	}
	// Reads through a table built before the damage fail.
	tb3, err := Build(context.Background(), f, int64(len(file)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{file[len(file)-1] ^ 1}, int64(len(file)-1)); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, tb3.Size(0))
	if _, err := tb3.ReadAt(0, b, 0); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("read of a damaged batch: %v, want ErrCorrupt", err)
	}
}

// flipAt reads r with the byte at at flipped.
type flipAt struct {
	r  io.ReaderAt
	at int64
}

func (f *flipAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.r.ReadAt(p, off)
	if i := f.at - off; i >= 0 && i < int64(n) {
		p[i] ^= 0xff
	}
	return n, err
}

// TestKafkaGrowing: a broker's active segment, read while a batch is half
// written, shows the whole batches; once the batch is complete, a refresh
// adds its records by scanning only the tail, in the same generation.
func TestKafkaGrowing(t *testing.T) {
	file, values := kafkaSegment(t, 5, 10)
	cut := len(file) - 40
	tb, path := openTemp(t, file[:cut], Options{CacheDir: "-"})
	n0 := tb.Len()
	if n0 >= int64(len(values)) || len(tb.Damage()) != 1 || !errors.Is(tb.Damage()[0], codec.ErrTruncated) {
		t.Fatalf("torn: %d records, damage %v", n0, tb.Damage())
	}
	gen := tb.Generation()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(file[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := tb.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tb.Generation() != gen || len(tb.Damage()) != 0 || !equalItems(readAll(t, tb), normal(values)) {
		t.Fatalf("grown: %d records, gen %d→%d, damage %v", tb.Len(), gen, tb.Generation(), tb.Damage())
	}
}

// TestKafkaCacheHostile: saved tables whose batches or records were
// changed are refused (the table is built again), never served.
func TestKafkaCacheHostile(t *testing.T) {
	file, _ := kafkaSegment(t, 3, 4)
	s, err := build(context.Background(), bytes.NewReader(file), int64(len(file)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	kt := s.tab.(*kafkaTable)
	if err := kt.check(s); err != nil {
		t.Fatalf("check of a good table: %v", err)
	}
	for name, edit := range map[string]func(k *kafkaTable){
		"value-past-data":  func(k *kafkaTable) { k.recs.ref(3).pos = k.batches[0].dlen },
		"batch-overlap":    func(k *kafkaTable) { k.batches[1].off-- },
		"offsets-inverted": func(k *kafkaTable) { k.batches[1].last = k.batches[1].base - 1 },
		"records-shift":    func(k *kafkaTable) { k.batches[1].first++ },
		"delta-repeat":     func(k *kafkaTable) { k.recs.ref(2).delta = k.recs.at(1).delta },
	} {
		var e encoder
		e.kafka(kt)
		d := &decoder{b: e.b}
		c := &kafkaTable{}
		d.kafka(c, s.n)
		if d.err != nil {
			t.Fatal(d.err)
		}
		edit(c)
		if err := c.check(s); err == nil {
			t.Errorf("%s: check accepted the table", name)
		}
	}
}

// TestKafkaSeqAndMeta: records are found by Kafka offset (exactly, and by
// ranges across batches, control records and gaps), and their metadata
// is the offset, timestamp, key and headers written.
func TestKafkaSeqAndMeta(t *testing.T) {
	file, values := kafkaSegment(t, 6, 10) // offsets 1000..1059 with markers at 1030, 1061
	tb, _ := openTemp(t, file, Options{CacheDir: "-"})
	if !tb.HasSeq() {
		t.Fatal("no sequence numbers")
	}
	for n := range tb.Len() {
		seq, ok := tb.Seq(n)
		if k, found := tb.BySeq(seq); !ok || !found || k != n {
			t.Fatalf("record %d: Seq %d, %v; BySeq -> %d, %v", n, seq, ok, k, found)
		}
	}
	if _, ok := tb.BySeq(1030); ok {
		t.Error("the offset of a transaction marker found a record")
	}
	var got []int64
	tb.SeqRecords(1025, 1035, func(n int64) bool { got = append(got, n); return true })
	if len(got) != 10 || got[0] != 25 || got[9] != 34 {
		t.Fatalf("records of offsets 1025..1035: %v", got)
	}
	var m decode.Meta
	if err := tb.RecordMeta(13, &m); err != nil {
		t.Fatal(err)
	}
	if !m.HasSeq || m.Seq != 1013 || string(m.Key) != "k3" || !m.HasKey || len(m.Frame) == 0 {
		t.Fatalf("meta of record 13: %+v", m)
	}
	if n := tb.Size(13); n != int64(len(values[13])) {
		t.Fatalf("size %d", n)
	}
}

// TestKafkaEmptySegment: an empty file named as a segment opens as an
// empty Kafka segment (a broker's just-rolled segment) and takes in the
// batches written to it; an empty file of another name stays an empty log.
func TestKafkaEmptySegment(t *testing.T) {
	tb, p := openNamed(t, "00000000000000001000.log", nil, Options{CacheDir: "-"})
	if tb.Format() != codec.Kafka || tb.Len() != 0 {
		t.Fatalf("empty segment: %v, %d records", tb.Format(), tb.Len())
	}
	file, values := kafkaSegment(t, 2, 5)
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !equalItems(readAll(t, tb), normal(values)) {
		t.Fatalf("grown segment: %d records", tb.Len())
	}
	to, _ := openNamed(t, "other.log", nil, Options{CacheDir: "-"})
	if to.Format() != codec.LevelDB {
		t.Fatalf("empty other.log: %v", to.Format())
	}
}

// TestKafkaParallelBuild: a table built in parallel parts, many more
// than its workers, serves what one built sequentially does (records,
// offsets, damage, facts), clean, with damage on a part's seam or inside
// a part, and torn; each part is built once and joined (counted: the
// table's record columns hold one piece a part that found records).
func TestKafkaParallelBuild(t *testing.T) {
	prev := minPartBytes
	minPartBytes = 1 << 10
	defer func() { minPartBytes = prev }()
	file, _ := kafkaSegment(t, 60, 30)
	size := int64(len(file))
	// The seams of a build of 2 workers, 4 parts each.
	seam := func(k int64) int64 { return size * k / (2 * kafkaPartsPerWorker) }
	flip := func(at ...int64) []byte {
		d := bytes.Clone(file)
		for _, a := range at {
			d[a] ^= 0x55
		}
		return d
	}
	cases := []struct {
		name string
		f    []byte
	}{
		{"clean", file},
		{"mid", flip(size / 2)},
		{"on-seams", flip(seam(1), seam(3)+1, seam(5)-1)},
		{"before-seam", flip(seam(2) - 40)},
		{"torn", file[:seam(7)+20]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seq, err := Build(context.Background(), bytes.NewReader(c.f), int64(len(c.f)), Options{Parallel: 1})
			if err != nil {
				t.Fatal(err)
			}
			if c.name != "clean" && len(seq.Damage()) == 0 {
				t.Fatalf("no damage reported")
			}
			for _, w := range []int{2, 3, 5} {
				par, err := Build(context.Background(), bytes.NewReader(c.f), int64(len(c.f)), Options{Parallel: w})
				if err != nil {
					t.Fatal(err)
				}
				if !equalItems(readAll(t, par), readAll(t, seq)) || fmt.Sprint(par.Damage()) != fmt.Sprint(seq.Damage()) ||
					fmt.Sprint(par.Info().Facts) != fmt.Sprint(seq.Info().Facts) {
					t.Fatalf("%d workers: parallel %d records, damage %v, facts %v; sequential %d, %v, %v", w,
						par.Len(), par.Damage(), par.Info().Facts, seq.Len(), seq.Damage(), seq.Info().Facts)
				}
				for n := range par.Len() {
					a, _ := par.Seq(n)
					b, _ := seq.Seq(n)
					if a != b {
						t.Fatalf("%d workers: record %d at offset %d, sequentially %d", w, n, a, b)
					}
				}
				if c.name == "clean" {
					want := w * kafkaPartsPerWorker
					if got := len(par.s().tab.(*kafkaTable).recs.segs); got != want {
						t.Errorf("%d workers: the table joins %d parts, want %d", w, got, want)
					}
				}
			}
		})
	}
}
