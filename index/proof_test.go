package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/codec/wlog"
)

// A lie is a record file and a saved table for it made from other bytes of
// the same size: it names the file's identity, passes every check of its
// own, and its first and last records read back.
type lie struct {
	name   string
	recs   [][]byte                            // the file's records
	other  func(t *testing.T, b []byte) []byte // the bytes the saved table was made from
	atRead bool                                // found only when a record is read (else when the table is loaded)
}

// flipIn returns b with one byte flipped at off.
func flipIn(b []byte, off int) []byte {
	b = slices.Clone(b)
	b[off] ^= 0x20
	return b
}

var lies = []lie{
	{
		// A record that ends a block, zeroed: the scan takes it for the
		// block's zero padding (no damage), so the table numbers every
		// later record one lower without a gap of its own.
		name: "leveldb record as padding", atRead: true,
		recs: [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), blockSize-14-1000),
			[]byte("c-2"), []byte("d-3"), []byte("e-4")},
		other: func(t *testing.T, b []byte) []byte {
			b = slices.Clone(b)
			clear(b[1007:blockSize])
			return b
		},
	},
	{
		// ../shared/repro/14: one byte flipped in record 1; the damage the
		// table claims there hides records of the intact file.
		name: "leveldb records hidden in damage", recs: hostileRecords(40, 'a'),
		other: func(t *testing.T, b []byte) []byte { return flipIn(b, 7+30+7+20) },
	},
	{
		name: "tfrecord record hidden in damage", recs: hostileRecords(40, 'a'),
		other: func(t *testing.T, b []byte) []byte { return flipIn(b, 16+30+12+20) },
	},
	{
		name: "recordio block hidden in damage", recs: hostileRecords(40, 'a'),
		other: func(t *testing.T, b []byte) []byte { return flipIn(b, 2*rioChunk+100) },
	},
}

// fileOf writes recs in the format a lie's name starts with.
func fileOf(t *testing.T, name string, recs [][]byte) []byte {
	switch {
	case bytes.HasPrefix([]byte(name), []byte("leveldb")):
		b, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
		return b
	case bytes.HasPrefix([]byte(name), []byte("tfrecord")):
		var b []byte
		for _, r := range recs {
			b = tfrecord.AppendRecord(b, r)
		}
		if bytes.HasPrefix([]byte(name), []byte("tfrecord-gzip")) {
			return codectest.Gzip(b)
		}
		return b
	}
	return recfile.RIOBytes(t, recs, recordio.WriterOptions{MaxItems: 3}, nil)
}

// plantLie writes l's file and, in a new cache directory, a saved table
// made from l's other bytes under the file's identity; it returns the
// file's path and the cache directory.
func plantLie(t *testing.T, l lie) (path, cache string) {
	t.Helper()
	dir, cache := t.TempDir(), t.TempDir()
	path, otherPath := filepath.Join(dir, "f"), filepath.Join(dir, "other")
	good := fileOf(t, l.name, l.recs)
	recfile.WriteFile(t, path, good)
	recfile.WriteFile(t, otherPath, l.other(t, good))
	s, mine := builtSnapshot(t, otherPath), builtSnapshot(t, path)
	if s.n == mine.n {
		t.Fatalf("the other bytes have as many records (%d)", s.n)
	}
	s.id, s.origin = mine.id, mine.origin
	writePlanted(t, cacheFileOf(t, cache, path), encodeCache(s, Options{}))
	return path, cache
}

// TestSavedTableLies: a saved table that lies about its source never gets
// a record served under a number it does not have. A lie in the damage it
// claims is found when it is loaded; one in its records when the first
// record past it is read, which then reads the source's own record, as
// does every other. Either way the saved table is replaced by a true one,
// and reads of the lying generation fail.
func TestSavedTableLies(t *testing.T) {
	t.Parallel()
	for _, l := range lies {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path, cache := plantLie(t, l)
			tb, err := Open(ctx, path, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			gen := tb.Generation()
			if got := tb.Info().Loaded; got != map[bool]string{true: "cached", false: "built"}[l.atRead] {
				t.Fatalf("table %s at open", got)
			}
			for i, want := range l.recs {
				if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, want) {
					t.Fatalf("record %d: %.20q, want %.20q", i, got, want)
				}
			}
			if tb.Len() != int64(len(l.recs)) || len(tb.Damage()) != 0 {
				t.Fatalf("%d records, damage %v, want %d and none", tb.Len(), tb.Damage(), len(l.recs))
			}
			if l.atRead {
				var b [1]byte
				if _, err := tb.ReadAtGeneration(gen, 1, b[:], 0); !errors.Is(err, ErrChanged) {
					t.Fatalf("read of the lying generation: %v, want ErrChanged", err)
				}
			}
			again, err := Open(ctx, path, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Info().Loaded != "cached" || again.Len() != int64(len(l.recs)) {
				t.Fatalf("next open: %s table of %d records", again.Info().Loaded, again.Len())
			}
		})
	}
}

// TestSavedTableTrueIsProven: an honest saved table serves every record,
// proving them as they are read in batches, and stays in use.
func TestSavedTableTrueIsProven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := make([][]byte, 3*proveBatch)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "record %d", i)
	}
	for _, name := range []string{"leveldb", "tfrecord", "tfrecord-gzip", "recordio"} {
		path := filepath.Join(t.TempDir(), "f")
		recfile.WriteFile(t, path, fileOf(t, name, recs))
		cache := t.TempDir()
		tb, err := Open(ctx, path, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		tb.Close()
		// Unsealed, as a published table or a file copied in: a sealed
		// compressed table is not proven (TestTFRecordGzipSavedIndexReads).
		unseal(t, cacheFileOf(t, cache, path))
		tb, err = Open(ctx, path, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		p := tb.s().proof
		if tb.Info().Loaded != "cached" || p == nil || p.upto.Load() != 0 {
			t.Fatalf("%s: reopened %s, proof %v", name, tb.Info().Loaded, p)
		}
		if got := readRecord(t, tb, 10); !bytes.Equal(got, recs[10]) {
			t.Fatalf("%s: record 10 wrong", name)
		}
		if up := p.upto.Load(); up != 10+proveBatch {
			t.Fatalf("%s: %d records proven after reading record 10, want %d", name, up, 10+proveBatch)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, recs[i]) {
				t.Fatalf("%s: record %d wrong", name, i)
			}
		}
		if tb.s().proof != p || p.upto.Load() != int64(len(recs)) || tb.Generation() != 0 {
			t.Fatalf("%s: after every read: proof of %d records, generation %d", name, p.upto.Load(), tb.Generation())
		}
		tb.Close()
	}
}

// forgeTFR drops record 5 from a TFRecord snapshot's table.
func forgeTFR(s *snapshot) {
	tt := s.tab.(*tfrTable)
	s.bytes -= tt.size(5)
	var l recLocs
	for k := range tt.locs.len() {
		if k != 5 {
			l.add(tt.locs.off(k), tt.locs.ln(k))
		}
	}
	tt.locs = l
	s.n--
}

// TestSavedTableForgedRecords: tables forged to skip a record with no
// damage to show for it (a TFRecord record, the last item of a recordio
// block) are caught by the first read past the skipped record.
func TestSavedTableForgedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := hostileRecords(40, 'a')
	for _, c := range []struct {
		name string
		skip func(s *snapshot)
	}{
		{"tfrecord", forgeTFR}, {"tfrecord-gzip", forgeTFR},
		{"recordio", func(s *snapshot) {
			rt := s.tab.(*rioTable) // blocks of 4 items: drop item 7, the second block's last
			var off, ln column[uint32]
			for k := range rt.ioff.len() {
				if k != 7 {
					off.add(rt.ioff.at(k))
					ln.add(rt.ilen.at(k))
				}
			}
			rt.ioff, rt.ilen = off, ln
			for i := range rt.blocks {
				if rt.blocks[i].first > 7 {
					rt.blocks[i].first--
				}
			}
			s.n--
			s.bytes -= int64(len(recs[7]))
		}},
	} {
		path, cache := filepath.Join(t.TempDir(), "f"), t.TempDir()
		recfile.WriteFile(t, path, fileOf(t, c.name, recs))
		s := builtSnapshot(t, path)
		c.skip(s)
		if err := s.checkTable(); err != nil {
			t.Fatalf("%s: forged table fails its checks: %v", c.name, err)
		}
		writePlanted(t, cacheFileOf(t, cache, path), encodeCache(s, Options{}))
		tb, err := Open(ctx, path, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		if tb.Info().Loaded != "cached" || tb.Len() != int64(len(recs))-1 {
			t.Fatalf("%s: forged table not loaded (%s, %d records)", c.name, tb.Info().Loaded, tb.Len())
		}
		for i, want := range recs {
			if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, want) {
				t.Fatalf("%s: record %d: %.20q, want %.20q", c.name, i, got, want)
			}
		}
		tb.Close()
	}
}

// TestSavedTableWALProofs: the read-only WAL formats' saved tables are
// used (their tables are provers), an honest one is proven by reads, and
// one forged to skip record 5 (no damage to show for it) is caught by the
// first read past it.
func TestSavedTableWALProofs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	promRecs := hostileRecords(40, 'a')
	etcdBytes, etcdRecs := etcdFile(t, 40, 0)
	for _, c := range []struct {
		name string
		file []byte
		recs [][]byte
		skip func(s *snapshot) // drops record 5 from the table
	}{
		{"prometheus", promSegment(t, promRecs, wlog.None), promRecs, func(s *snapshot) {
			pt := s.tab.(*promTable)
			pt.off, pt.ln = slices.Delete(pt.off, 5, 6), slices.Delete(pt.ln, 5, 6)
			pt.dlen, pt.comp = slices.Delete(pt.dlen, 5, 6), slices.Delete(pt.comp, 5, 6)
		}},
		{"etcd", etcdBytes, etcdRecs, func(s *snapshot) {
			et := s.tab.(*etcdTable)
			et.off, et.ln = slices.Delete(et.off, 5, 6), slices.Delete(et.ln, 5, 6)
			et.seed, et.kind = slices.Delete(et.seed, 5, 6), slices.Delete(et.kind, 5, 6)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, forged := range []bool{false, true} {
				path, cache := filepath.Join(t.TempDir(), "00000001"), t.TempDir()
				recfile.WriteFile(t, path, c.file)
				s, want := builtSnapshot(t, path), int64(len(c.recs))
				if forged {
					s.bytes -= s.tab.size(5)
					c.skip(s)
					s.n--
					if err := s.checkTable(); err != nil {
						t.Fatalf("forged table fails its checks: %v", err)
					}
					want--
				}
				writePlanted(t, cacheFileOf(t, cache, path), encodeCache(s, Options{}))
				tb, err := Open(ctx, path, Options{CacheDir: cache})
				if err != nil {
					t.Fatal(err)
				}
				defer tb.Close()
				if tb.Info().Loaded != "cached" || tb.Len() != want || tb.Proven(0) {
					t.Fatalf("forged %v: %s table of %d records, record 0 proven %v", forged, tb.Info().Loaded, tb.Len(), tb.Proven(0))
				}
				for i, r := range c.recs {
					if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, r) {
						t.Fatalf("forged %v: record %d: %.20q, want %.20q", forged, i, got, r)
					}
				}
				if tb.Len() != int64(len(c.recs)) || tb.Generation() != map[bool]uint64{false: 0, true: 1}[forged] {
					t.Fatalf("forged %v: %d records, generation %d after reading", forged, tb.Len(), tb.Generation())
				}
			}
		})
	}
}
