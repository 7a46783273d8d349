package tfrecord

import (
	"bytes"
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestScanParallelMatchesSequential: clean, damaged and nested files (whose
// records are TFRecord files, where a part can sync on an inner record)
// give the records and damage of a sequential scan, falling back to one
// when the hand-over check fails.
func TestScanParallelMatchesSequential(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	clean, _ := writeAll(t, randomRecords(rng, 2000, 3000))
	damaged := bytes.Clone(clean)
	for range 6 {
		damaged[rng.IntN(len(damaged))] ^= 0x20
	}
	var inner [][]byte
	for range 40 {
		f, _ := writeAll(t, randomRecords(rng, 30, 200))
		inner = append(inner, f)
	}
	nested, _ := writeAll(t, inner)
	for name, f := range map[string][]byte{"clean": clean, "damaged": damaged, "nested": nested} {
		r := bytes.NewReader(f)
		size := int64(len(f))
		_, want, wantDmg, _ := scanAll(t, r, size, Options{})
		for _, n := range []int{1, 2, 5, 16, 47} {
			var mu sync.Mutex
			got := map[int][]Record{}
			res, err := ScanParallel(context.Background(), r, size, Options{Window: 4096}, codec.Split{Parts: n, Workers: 2}, func(i int, start, end int64, sc *Scanner) error {
				var recs []Record
				for sc.Next() {
					recs = append(recs, sc.Record())
				}
				mu.Lock()
				got[i] = recs
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var all []Record
			for i := range res.Parts {
				all = append(all, got[i]...)
			}
			if !reflect.DeepEqual(all, want) || !reflect.DeepEqual(res.Damage, wantDmg) || res.Records != int64(len(want)) {
				t.Fatalf("%s, %d parts (%d used): %d records / %d damage, sequential %d / %d",
					name, n, res.Parts, len(all), len(res.Damage), len(want), len(wantDmg))
			}
			if len(want) > 0 && res.LastEnd != want[len(want)-1].End() {
				t.Fatalf("%s: LastEnd %d", name, res.LastEnd)
			}
			t.Logf("%s, %d parts: %d used", name, n, res.Parts)
		}
	}
}

func TestAlignedStart(t *testing.T) {
	t.Parallel()
	file, offs := writeAll(t, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	bad := bytes.Clone(file)
	bad[offs[1]+9] ^= 1 // length checksum of record 1
	s := NewScanner(bytes.NewReader(bad), int64(len(bad)), Options{Start: offs[1], Aligned: true})
	var got []Record
	for s.Next() {
		got = append(got, s.Record())
	}
	if len(got) != 1 || got[0].Off != offs[2] || len(s.Damage()) != 1 || s.Damage()[0].Off != offs[1] {
		t.Fatalf("records %v damage %v", got, s.Damage())
	}
}
