package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
)

// vectorDir holds the reference vectors (see codectest.VectorDir).
var vectorDir = codectest.VectorDir()

// want is what a vector manifest says a reader must return, with the
// vector's path (a leveldb log kept by its manifest alone is written
// again, see recfile.Vector).
type want struct {
	codectest.Expect
	path string
}

// loadWants reads every manifest of both vector folders.
func loadWants(t testing.TB) []want {
	t.Helper()
	var out []want
	for _, dir := range []string{"leveldb", "grailbio"} {
		codectest.ReadManifests(t, dir, func(path string, _ []byte) {
			e := codectest.LoadExpect(t, path)
			out = append(out, want{Expect: e, path: recfile.Vector(t, e.Name)})
		})
	}
	return out
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// readRecord reads record n whole through ReadAt, in pieces of odd sizes so
// that reads start and end inside chunks and blocks and across their edges.
func readRecord(t testing.TB, tb *Table, n int64) []byte {
	t.Helper()
	size := tb.Size(n)
	out := make([]byte, 0, size)
	steps := []int64{size + 1, 4093, 32761, 1, 32740, 65537}
	step := steps[int(n)%len(steps)]
	if step <= 0 {
		step = 1
	}
	for off := int64(0); off < size; off += step {
		p := make([]byte, min(step, size-off))
		k, err := tb.ReadAt(n, p, off)
		if err != nil {
			t.Fatalf("record %d: ReadAt(%d bytes at %d): %d, %v", n, len(p), off, k, err)
		}
		out = append(out, p[:k]...)
	}
	return out
}

// readRecords reads every record of tb as readRecord does, in pieces.
func readRecords(t testing.TB, tb *Table) [][]byte {
	t.Helper()
	out := make([][]byte, tb.Len())
	for n := range out {
		out[n] = readRecord(t, tb, int64(n))
	}
	return out
}

// checkLoaded fails t unless tb is an undamaged table of format f with n
// records, loaded as loaded says ("built" or "cached").
func checkLoaded(t testing.TB, tb *Table, f codec.Format, loaded string, n int) {
	t.Helper()
	if in := tb.Info(); tb.Format() != f || in.Loaded != loaded || tb.Len() != int64(n) || len(tb.Damage()) > 0 {
		t.Fatalf("%s: format %v, source %s, %d records, damage %v", loaded, tb.Format(), in.Loaded, tb.Len(), tb.Damage())
	}
}

// checkBuiltThenCached opens the record file at path twice with the cache
// directory cache: the first open builds and saves its table, the second
// loads it. Each time the table must be of format f, undamaged, pass more
// (when not nil), and read back as recs.
func checkBuiltThenCached(t *testing.T, path, cache string, f codec.Format, recs [][]byte, more func(*Table)) {
	t.Helper()
	for _, want := range []string{"built", "cached"} {
		tb, err := Open(context.Background(), path, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		checkLoaded(t, tb, f, want, len(recs))
		if more != nil {
			more(tb)
		}
		codectest.SamePayloads(t, want, readRecords(t, tb), recs)
		tb.Close()
	}
}

// check compares a table with a manifest.
func check(t *testing.T, tb *Table, w want) {
	t.Helper()
	if tb.Len() != w.Count {
		t.Fatalf("%d records, manifest says %d", tb.Len(), w.Count)
	}
	payloads := w.Payloads()
	for n := range tb.Len() {
		b := readRecord(t, tb, n)
		if int64(len(b)) != tb.Size(n) {
			t.Fatalf("record %d: read %d bytes, Size says %d", n, len(b), tb.Size(n))
		}
		if err := payloads.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := payloads.Done(); err != nil {
		t.Fatalf("aggregate hashes differ from the manifest: %v", err)
	}
	if w.Trailer != nil {
		if !tb.HasTrailer() || tb.TrailerSize() != w.Trailer.Len {
			t.Fatalf("trailer: has %v size %d, manifest %d", tb.HasTrailer(), tb.TrailerSize(), w.Trailer.Len)
		}
		p := make([]byte, w.Trailer.Len)
		if k, err := tb.ReadTrailerAt(p, 0); err != nil || sum(p[:k]) != w.Trailer.Sha256 {
			t.Fatalf("trailer bytes: %d, %v", k, err)
		}
	} else if tb.HasTrailer() {
		t.Fatalf("table has a trailer the manifest does not list")
	}
	hdr := tb.Header()
	if len(hdr) != len(w.Header) {
		t.Fatalf("%d header entries, manifest %d", len(hdr), len(w.Header))
	}
	for i, h := range w.Header {
		if hdr[i].Key != h.Key || !sameValue(hdr[i].Value, h.Value) {
			t.Fatalf("header %d: %q=%v, manifest %q=%v", i, hdr[i].Key, hdr[i].Value, h.Key, h.Value)
		}
	}
	if len(tb.Damage()) != 0 {
		t.Fatalf("clean vector reported damage: %v", tb.Damage())
	}
}

// sameValue compares a header value with its JSON form.
func sameValue(got, want any) bool {
	switch g := got.(type) {
	case bool, string:
		return g == want
	case int64:
		f, ok := want.(float64)
		return ok && float64(g) == f
	case uint64:
		f, ok := want.(float64)
		return ok && float64(g) == f
	}
	return false
}

func TestVectors(t *testing.T) {
	for _, w := range loadWants(t) {
		t.Run(w.Name, func(t *testing.T) {
			o := Options{CacheDir: t.TempDir(), LegacyTransform: w.Legacy}
			tb, err := Open(context.Background(), w.path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if tb.Info().Loaded != "built" {
				t.Fatalf("first open: source %q", tb.Info().Loaded)
			}
			check(t, tb, w)
			// The saved table loads back identical and serves the same bytes.
			tc, err := Open(context.Background(), w.path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer tc.Close()
			if tc.Info().Loaded != "cached" {
				t.Fatalf("second open: source %q, want cached", tc.Info().Loaded)
			}
			if !sameTable(tb.s(), tc.s()) {
				t.Fatalf("loaded table differs from the built one")
			}
			check(t, tc, w)
		})
	}
}

// sameTable compares two snapshots, ignoring how they were obtained.
func sameTable(a, b *snapshot) bool {
	x, y := *a, *b
	x.source, y.source, x.elapsed, y.elapsed = "", "", 0, 0
	x.src, y.src, x.fst, y.fst = nil, nil, nil, nil // two opens, two descriptors
	x.proof, y.proof = nil, nil                     // a loaded table is proven as it is read
	for _, s := range []*snapshot{&x, &y} {
		switch t := s.tab.(type) {
		case *logTable:
			c := flatLog{hdr: t.hdr, resume: t.resume, info: t.info, unmask: t.unmask, side: t.side}
			c.off, c.ln = t.locs.flat()
			if len(c.side) == 0 {
				c.side = nil
			}
			s.tab = &c
		case *tfrTable:
			c := flatTFR{side: t.side, resume: t.resume, comp: t.comp, dsize: t.dsize}
			c.off, c.ln = t.locs.flat()
			if len(c.side) == 0 {
				c.side = nil
			}
			s.tab = &c
		case *rioTable:
			c := flatRIO{blocks: t.blocks, ioff: t.ioff.values(), ilen: t.ilen.values(), big: t.big, header: t.header,
				transf: t.transf, trailer: t.trailer, hasTrl: t.hasTrl, legacyT: t.legacyT}
			if len(c.big) == 0 {
				c.big = nil
			}
			if len(c.ioff) == 0 {
				c.blocks = nil
			}
			s.tab = &c
		}
	}
	return reflect.DeepEqual(x, y)
}

// Tables with plain slices for their columns, which sameTable compares.
type (
	flatLog struct {
		table
		off    []int64
		ln     []uint32
		hdr    uint8
		side   map[int64]oddLog
		resume int64
		info   leveldb.Info
		unmask bool
	}
	flatTFR struct {
		table
		off    []int64
		ln     []uint32
		side   map[int64]int64
		resume int64
		comp   tfrecord.Compression
		dsize  int64
	}
	flatRIO struct {
		table
		blocks     []rioBlock
		ioff, ilen []uint32
		big        map[int64]int64
		header     []HeaderEntry
		transf     []string
		trailer    recordio.ItemLoc
		hasTrl     bool
		legacyT    string
	}
)

func TestFormatsDetected(t *testing.T) {
	for _, w := range loadWants(t) {
		tb, err := Open(context.Background(), w.path, Options{CacheDir: "-", LegacyTransform: w.Legacy})
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		f := tb.Format()
		tb.Close()
		isLog := strings.HasPrefix(w.Name, "leveldb/")
		if isLog != (f == codec.LevelDB) {
			t.Errorf("%s: detected %v", w.Name, f)
		}
	}
}
