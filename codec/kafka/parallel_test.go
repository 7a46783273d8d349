package kafka

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// parallelScan runs ScanParallel in n parts and returns the records (as
// the parts in order give them) and the result.
func parallelScan(t *testing.T, file []byte, n int) ([]Record, ParallelResult) {
	t.Helper()
	var mu sync.Mutex
	parts := map[int][]Record{}
	res, err := ScanParallel(context.Background(), bytes.NewReader(file), int64(len(file)), Options{Window: 256}, n,
		func(i int, start, end int64, sc *Scanner) error {
			var recs []Record
			for sc.Next() {
				recs = append(recs, sc.Record())
			}
			mu.Lock()
			parts[i] = recs
			mu.Unlock()
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for i := range res.Parts {
		out = append(out, parts[i]...)
	}
	return out, res
}

// TestScanParallel: parallel scans in 2 to 5 parts of clean and damaged
// segments yield the records and damage a sequential scan yields.
func TestScanParallel(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 8, 7}, None, Zstd, Gzip)
	flipped := bytes.Clone(sg.file)
	flipped[sg.batches[5].Off+70] ^= 0xff
	torn := sg.file[:sg.batches[11].Off+40]
	garbage := append(append(bytes.Clone(sg.file[:sg.batches[3].Off]), bytes.Repeat([]byte{2, 9}, 999)...), sg.file[sg.batches[3].Off:]...)
	for name, file := range map[string][]byte{"clean": sg.file, "flipped": flipped, "torn": torn, "garbage": garbage} {
		for n := 2; n <= 5; n++ {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				t.Parallel()
				seq, s := scanAll(t, file, Options{Window: 256})
				var want []Record
				for _, r := range seq {
					want = append(want, r.Record)
				}
				got, res := parallelScan(t, file, n)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%d records in %d parts, want the sequential scan's %d", len(got), res.Parts, len(want))
				}
				if !reflect.DeepEqual(res.Damage, s.Damage()) && !(len(res.Damage) == 0 && len(s.Damage()) == 0) {
					t.Fatalf("damage %v, want %v", res.Damage, s.Damage())
				}
				in := s.Info()
				if res.Info.Records != in.Records || res.Info.Batches != in.Batches || res.Info.LastEnd != in.LastEnd ||
					res.Info.FirstOffset != in.FirstOffset || res.Info.LastOffset != in.LastOffset {
					t.Fatalf("info %+v, want %+v", res.Info, in)
				}
			})
		}
	}
}

// TestScanParallelFallsBack: a part that syncs on a batch stored inside
// another batch's value (a segment kept as a record) does not hand over,
// and the file is scanned sequentially instead.
func TestScanParallelFallsBack(t *testing.T) {
	t.Parallel()
	inner := v2Segment(t, []int{3, 3, 3, 3}, None).file
	outer := v2Segment(t, []int{1}, None)
	// One batch whose value is a whole segment, between two small ones.
	big := bytes.Clone(outer.file)
	rec := append(bytes.Clone(inner), inner...)
	file := append(big, mkValueBatch(t, 200, rec)...)
	file = append(file, mkValueBatch(t, 300, []byte("after"))...)
	seq, _ := scanAll(t, file, Options{})
	got, res := parallelScan(t, file, 3)
	if len(got) != len(seq) || len(got) != 3 || res.Parts != 1 {
		t.Fatalf("%d records in %d parts, want %d in one (the fallback)", len(got), res.Parts, len(seq))
	}
}
