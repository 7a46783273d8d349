package kafka

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// yielded is one record of a scan, with its batch.
type yielded struct {
	b Batch
	r Record
}

// scanRuns scans file with o, taking the records a run at a time with
// NextRun, or, when mix is set, alternately one by Next and a run, and
// returns them with the scanner.
func scanRuns(file []byte, o Options, mix bool) ([]yielded, *Scanner) {
	s := NewScanner(bytes.NewReader(file), int64(len(file)), o)
	var out []yielded
	for i := 0; ; i++ {
		if mix && i%2 == 0 {
			if !s.Next() {
				break
			}
			out = append(out, yielded{s.Batch(), s.Record()})
			continue
		}
		if !s.NextRun() {
			break
		}
		b, run := s.Run()
		if len(run) == 0 {
			panic("NextRun gave an empty run")
		}
		for _, r := range run {
			out = append(out, yielded{*b, r})
		}
	}
	return out, s
}

// scanNext scans file with o one record at a time.
func scanNext(file []byte, o Options) ([]yielded, *Scanner) {
	s := NewScanner(bytes.NewReader(file), int64(len(file)), o)
	var out []yielded
	for s.Next() {
		out = append(out, yielded{s.Batch(), s.Record()})
	}
	return out, s
}

// sameRuns checks that runs (and runs mixed with Next) yield what Next
// yields: the same records with the same batches, the same Info, damage
// and error. It returns the runs' scanner.
func sameRuns(t *testing.T, file []byte, o Options) *Scanner {
	t.Helper()
	want, ws := scanNext(file, o)
	var runs *Scanner
	for _, mix := range []bool{false, true} {
		got, gs := scanRuns(file, o, mix)
		if len(got) != len(want) {
			t.Fatalf("mix=%v: %d records, Next gives %d", mix, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("mix=%v: record %d:\n got %+v\nwant %+v", mix, i, got[i], want[i])
			}
		}
		if !reflect.DeepEqual(gs.Info(), ws.Info()) || !reflect.DeepEqual(gs.Damage(), ws.Damage()) || fmt.Sprint(gs.Err()) != fmt.Sprint(ws.Err()) {
			t.Fatalf("mix=%v: info %+v damage %v err %v\nNext: info %+v damage %v err %v", mix,
				gs.Info(), gs.Damage(), gs.Err(), ws.Info(), ws.Damage(), ws.Err())
		}
		if !mix {
			runs = gs
		}
	}
	return runs
}

// TestNextRun: runs yield exactly what Next yields, on clean, compressed,
// legacy, control, damaged and torn segments, through the window and
// through the file (batches larger than the window), and for a batch of
// more records than a run holds; runs of v2 batches in the window are
// handed out as load kept them (counted), the others parsed one by one.
func TestNextRun(t *testing.T) {
	t.Parallel()
	clean := v2Segment(t, []int{3, 0, 7, 1, 12}, None)
	mixed := v2Segment(t, []int{5, 9, 2, 4}, None, Zstd, Gzip, Snappy, LZ4)
	marker := func(off int64, typ byte) []byte {
		return codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Attr: attrTransactional | attrControl, ProducerID: 42,
			Records: []codectest.KafkaRecord{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 5}}}})
	}
	txn := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Attr: attrTransactional, ProducerID: 42, Records: testRecords(0, 3)})
	txn = append(append(txn, marker(3, 1)...), marker(4, 0)...)
	legacy := append(bytes.Clone(v1Set(t, 1, false).file), v2Segment(t, []int{2, 3}, Zstd).file...)
	flipped := bytes.Clone(mixed.file)
	flipped[mixed.batches[1].Off+70] ^= 0x40
	torn := bytes.Clone(clean.file[:len(clean.file)-9])
	many := make([]codectest.KafkaRecord, maxKept+300)
	for i := range many {
		many[i] = codectest.KafkaRecord{Value: []byte{byte(i)}, TimestampDelta: int64(i % 7)}
	}
	big := append(bytes.Clone(clean.file), codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 1000, Records: many})...)
	for _, tc := range []struct {
		name   string
		file   []byte
		o      Options
		kept   int64 // runs handed out as kept
		strict bool
	}{
		{"clean", clean.file, Options{}, 4, false},
		{"codecs", mixed.file, Options{}, 4, false},
		{"control", txn, Options{}, 3, false},
		{"legacy", legacy, Options{}, 2, false},
		{"flipped", flipped, Options{}, 3, true},
		{"torn", torn, Options{}, 3, true},
		{"more-than-a-run", big, Options{}, 5, false},
		// Only the batch of one record fits in the window; the others
		// are read through the file.
		{"through-the-file", clean.file, Options{Window: 130}, 1, false},
		// The compressed batches' records are decompressed in memory,
		// the uncompressed one is read through the file.
		{"codecs-small-window", mixed.file, Options{Window: 130}, 3, false},
		{"legacy-small-window", legacy, Options{Window: 150}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := sameRuns(t, tc.file, tc.o)
			if s.keptRuns != tc.kept {
				t.Errorf("%d runs handed out as kept, want %d", s.keptRuns, tc.kept)
			}
			if got := len(s.Damage()) > 0; got != tc.strict {
				t.Errorf("damage %v", s.Damage())
			}
			o := tc.o
			o.Strict = true
			sameRuns(t, tc.file, o)
		})
	}
}
