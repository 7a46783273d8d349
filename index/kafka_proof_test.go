package index

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestSavedTableKafkaProofs: a Kafka segment's saved table is used (the
// table is a prover) and proven by reads; one forged to leave out a record
// of a batch, or a whole batch (no damage to show for either), is caught
// by the first read past it, and the records read are the segment's.
func TestSavedTableKafkaProofs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, values := kafkaSegment(t, 7, 20)
	// drop removes records [from, to) of batch bi (the whole batch when
	// they are all of its records) from the table.
	drop := func(bi int, from, to int64, whole bool) func(s *snapshot) {
		return func(s *snapshot) {
			kt := s.tab.(*kafkaTable)
			var kept parted[kRec]
			for k := range kt.recs.len() {
				if k >= from && k < to {
					s.bytes -= int64(kt.recs.at(k).vlen)
				} else {
					kept.add(kt.recs.at(k))
				}
			}
			kt.recs = kept
			for i := bi + 1; i < len(kt.batches); i++ {
				kt.batches[i].first -= to - from
			}
			if whole {
				kt.batches = slices.Delete(kt.batches, bi, bi+1)
			}
			s.n -= to - from
		}
	}
	for _, c := range []struct {
		name   string
		forge  func(s *snapshot) // nil: the honest table
		hidden int64             // records the forged table leaves out
	}{
		{"honest", nil, 0},
		{"record", drop(0, 5, 6, false), 1},
		{"batch", drop(2, 40, 60, true), 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path, cache := filepath.Join(t.TempDir(), "00000000000000001000.log"), t.TempDir()
			recfile.WriteFile(t, path, file)
			s := builtSnapshot(t, path)
			if c.forge != nil {
				c.forge(s)
				if err := s.checkTable(); err != nil {
					t.Fatalf("forged table fails its checks: %v", err)
				}
			}
			writePlanted(t, cacheFileOf(t, cache, path), encodeCache(s, Options{}))
			tb, err := Open(ctx, path, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if want := int64(len(values)) - c.hidden; tb.Info().Loaded != "cached" || tb.Len() != want || tb.Proven(0) {
				t.Fatalf("%s table of %d records (want %d from the saved one), record 0 proven %v", tb.Info().Loaded, tb.Len(), want, tb.Proven(0))
			}
			for i, v := range values {
				if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, v) {
					t.Fatalf("record %d: %.20q, want %.20q", i, got, v)
				}
			}
			gen := uint64(0)
			if c.forge != nil {
				gen = 1
			}
			if tb.Len() != int64(len(values)) || tb.Generation() != gen || !tb.Proven(tb.Len()-1) {
				t.Fatalf("%d records, generation %d, last proven %v after reading", tb.Len(), tb.Generation(), tb.Proven(tb.Len()-1))
			}
		})
	}
}

// TestSavedTableKafkaDamageClaim: a saved table made from a copy of the
// segment with a byte flipped in a batch claims damage there; loaded for
// the intact segment, the claim is checked at once (the scan finds the
// batch's records in the claimed range), the table dropped, and the
// segment scanned afresh; for the flipped copy itself, the claim holds and
// the saved table is used.
func TestSavedTableKafkaDamageClaim(t *testing.T) {
	t.Parallel()
	file, values := kafkaSegment(t, 7, 20)
	dir, cache := t.TempDir(), t.TempDir()
	path, otherPath := filepath.Join(dir, "00000000000000001000.log"), filepath.Join(dir, "other.log")
	recfile.WriteFile(t, path, file)
	mine := builtSnapshot(t, path)
	recfile.WriteFile(t, otherPath, flipIn(file, int(mine.tab.(*kafkaTable).batches[2].off)+30))
	s := builtSnapshot(t, otherPath)
	if s.n != mine.n-20 || len(s.damage) != 1 {
		t.Fatalf("the flipped copy has %d records and damage %v, want %d and one range", s.n, s.damage, mine.n-20)
	}
	s.id, s.origin = mine.id, mine.origin
	writePlanted(t, cacheFileOf(t, cache, path), encodeCache(s, Options{}))
	tb, err := Open(context.Background(), path, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "built" || tb.Len() != int64(len(values)) || len(tb.Damage()) != 0 {
		t.Fatalf("%s table of %d records, damage %v", tb.Info().Loaded, tb.Len(), tb.Damage())
	}
	for i, v := range values {
		if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, v) {
			t.Fatalf("record %d: %.20q, want %.20q", i, got, v)
		}
	}
	for _, want := range []string{"built", "cached"} { // the first open saves the table, the second loads it
		tb, err := Open(context.Background(), otherPath, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		if tb.Info().Loaded != want || tb.Len() != s.n || len(tb.Damage()) != 1 {
			t.Fatalf("flipped copy: %s table of %d records, damage %v; want %s", tb.Info().Loaded, tb.Len(), tb.Damage(), want)
		}
	}
}
