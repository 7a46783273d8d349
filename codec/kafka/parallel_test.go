package kafka

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
)

// parallelScan runs ScanParallel split as sp and returns the records (as
// the parts in order give them) and the result. It fails t unless each
// part was scanned once, by at most sp.Workers goroutines at once.
func parallelScan(t *testing.T, file []byte, sp codec.Split) ([]Record, ParallelResult) {
	t.Helper()
	var mu sync.Mutex
	parts := map[int][]Record{}
	scans := map[int]int{}
	var busy, most atomic.Int32
	res, err := ScanParallel(context.Background(), bytes.NewReader(file), int64(len(file)), Options{Window: 256}, sp,
		func(i int, start, end int64, sc *Scanner) error {
			b := busy.Add(1)
			defer busy.Add(-1)
			for m := most.Load(); b > m && !most.CompareAndSwap(m, b); m = most.Load() {
			}
			var recs []Record
			for sc.Next() {
				recs = append(recs, sc.Record())
			}
			mu.Lock()
			parts[i] = recs
			scans[i]++
			mu.Unlock()
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if w := int32(sp.Workers); w > 0 && most.Load() > w {
		t.Errorf("%d parts scanned at once, want at most %d workers", most.Load(), w)
	}
	for i := range sp.Parts {
		want := 1
		if i == 0 && res.Parts == 1 && sp.Parts > 1 {
			want = 2 // the sequential scan after parts that did not hand over
		}
		if scans[i] != want {
			t.Errorf("part %d of %d scanned %d times, want %d", i, sp.Parts, scans[i], want)
		}
	}
	var out []Record
	for i := range res.Parts {
		out = append(out, parts[i]...)
	}
	return out, res
}

// TestScanParallel: parallel scans in 2 to 5 parts, one goroutine each,
// and in many more parts than their 2 or 3 workers (most parts then hold
// no batch start, and every seam falls inside a batch, on a damaged one or
// on garbage) of clean and damaged segments yield the records and damage a
// sequential scan yields.
func TestScanParallel(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 8, 7}, None, Zstd, Gzip)
	flipped := bytes.Clone(sg.file)
	flipped[sg.batches[5].Off+70] ^= 0xff
	torn := sg.file[:sg.batches[11].Off+40]
	garbage := append(append(bytes.Clone(sg.file[:sg.batches[3].Off]), bytes.Repeat([]byte{2, 9}, 999)...), sg.file[sg.batches[3].Off:]...)
	for name, file := range map[string][]byte{"clean": sg.file, "flipped": flipped, "torn": torn, "garbage": garbage} {
		splits := []codec.Split{{Parts: 2}, {Parts: 3}, {Parts: 4}, {Parts: 5}, {Parts: 9, Workers: 2}, {Parts: 31, Workers: 3}, {Parts: 97, Workers: 2}}
		for _, sp := range splits {
			t.Run(fmt.Sprintf("%s/%d-%d", name, sp.Parts, sp.Workers), func(t *testing.T) {
				t.Parallel()
				seq, s := scanAll(t, file, Options{Window: 256})
				var want []Record
				for _, r := range seq {
					want = append(want, r.Record)
				}
				got, res := parallelScan(t, file, sp)
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
	got, res := parallelScan(t, file, codec.Split{Parts: 3})
	if len(got) != len(seq) || len(got) != 3 || res.Parts != 1 {
		t.Fatalf("%d records in %d parts, want %d in one (the fallback)", len(got), res.Parts, len(seq))
	}
}

// TestScanParallelReusesWindows: the parts a worker takes one after
// another read into one window buffer, so that a build of many parts
// allocates one a worker; the records are still the sequential scan's.
// Each record a part yields is checked inside the callback, as the part
// yields it: its batch, offset, timestamp and key, value and header
// ranges are the sequential scan's record of that offset, and every
// offset is yielded by exactly one part.
func TestScanParallelReusesWindows(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 8, 7}, None)
	seq, _ := scanAll(t, sg.file, Options{Window: 256})
	want := map[int64]scanned{}
	for _, r := range seq {
		want[r.Offset] = r
	}
	var mu sync.Mutex
	bufs := map[*byte]bool{}
	seen := map[int64]int{}
	sp := codec.Split{Parts: 9, Workers: 2}
	res, err := ScanParallel(context.Background(), bytes.NewReader(sg.file), int64(len(sg.file)), Options{Window: 256}, sp,
		func(i int, start, end int64, sc *Scanner) error {
			var bad []string
			var offs []int64
			for sc.Next() {
				b, rec := sc.Batch(), sc.Record()
				offs = append(offs, rec.Offset)
				w, ok := want[rec.Offset]
				switch {
				case !ok:
					bad = append(bad, fmt.Sprintf("part %d: offset %d, not in the sequential scan", i, rec.Offset))
					continue
				case rec != w.Record || b != w.batch:
					bad = append(bad, fmt.Sprintf("part %d: record %+v in batch at %d, want %+v in batch at %d", i, rec, b.Off, w.Record, w.batch.Off))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, o := range offs {
				seen[o]++
			}
			for _, m := range bad {
				t.Error(m)
			}
			if b := sc.w.Buf(); b != nil {
				bufs[&b[:1][0]] = true
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Parts != sp.Parts || len(seen) != len(seq) {
		t.Fatalf("%d offsets in %d parts, want %d in %d", len(seen), res.Parts, len(seq), sp.Parts)
	}
	for o, n := range seen {
		if n != 1 {
			t.Errorf("offset %d yielded %d times, want once", o, n)
		}
	}
	if len(bufs) == 0 || len(bufs) > sp.Workers {
		t.Fatalf("%d window buffers for %d parts on %d workers, want 1 to %d", len(bufs), sp.Parts, sp.Workers, sp.Workers)
	}
}
