package interop

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/grailbio/base/recordio"
	"github.com/recfs/recfs/codec"
)

// rioVariants are the v2 flavours both directions are tested with.
var rioVariants = []struct {
	name         string
	transformers []string
	trailer      bool
}{
	{"plain", nil, false},
	{"plain+trailer", nil, true},
	{"flate", []string{"flate"}, false},
	{"flate+trailer", []string{"flate"}, true},
	{"zstd", []string{"zstd"}, false},
	{"zstd+trailer", []string{"zstd"}, true},
}

// eachRioCase runs f on a random case of every variant (a subtest each)
// for each of n seeds.
func eachRioCase(t *testing.T, n int, f func(t *testing.T, seed int64, c rioCase)) {
	seeds := testSeeds(t, n)
	for _, v := range rioVariants {
		t.Run(v.name, func(t *testing.T) {
			for _, seed := range seeds {
				f(t, seed, newRioCase(seed, v.transformers, v.trailer))
			}
		})
	}
}

// rioCase is one randomized recordio file: items, header, blocking, trailer.
type rioCase struct {
	seed  int64
	items [][]byte
	spec  rioSpec
}

// newRioCase draws a file for one seed and variant.
func newRioCase(seed int64, transformers []string, trailer bool) rioCase {
	rng := rand.New(rand.NewSource(seed))
	sizes := rioSizeMix(rng, 24+rng.Intn(24))
	items := makeRecords(rng, sizes)
	for i := range items {
		if i%3 == 1 && len(items[i]) > 0 { // compressible items, so transformers shrink something
			unit := []byte(fmt.Sprintf("item %d of seed %d; ", i, seed))
			items[i] = bytes.Repeat(unit, len(items[i])/len(unit)+1)[:len(items[i])]
		}
	}
	s := rioSpec{Transformers: transformers, FlushAfter: map[int]bool{}}
	switch rng.Intn(3) {
	case 0: // reference default MaxItems: one block unless flushed
	case 1:
		s.MaxItems = uint32(1 + rng.Intn(3))
	default:
		s.MaxItems = uint32(1 + rng.Intn(30))
	}
	for i := range items {
		if rng.Intn(8) == 0 {
			s.FlushAfter[i] = true
		}
	}
	for i, n := 0, rng.Intn(5); i < n; i++ {
		key := fmt.Sprintf("k%d", rng.Intn(3)) // repeats on purpose: headers are ordered lists
		var v any
		switch rng.Intn(4) {
		case 0:
			v = rng.Intn(2) == 0
		case 1:
			v = rng.Int63() - rng.Int63()
		case 2:
			v = rng.Uint64()
		default:
			v = string(payload(i, rng.Intn(40)))
		}
		s.Header = append(s.Header, recordio.KeyValue{Key: key, Value: v})
	}
	if trailer {
		s.Trailer = randPayload(rng, 1+rng.Intn(70000))
	}
	return rioCase{seed: seed, items: items, spec: s}
}

// wantHeader is the header a file written from s must carry (spec section
// 6): transformer entries, then trailer=true, then the user entries.
func (c rioCase) wantHeader() []recordio.KeyValue {
	var h []recordio.KeyValue
	for _, t := range c.spec.Transformers {
		h = append(h, recordio.KeyValue{Key: recordio.KeyTransformer, Value: t})
	}
	if c.spec.Trailer != nil {
		h = append(h, recordio.KeyValue{Key: recordio.KeyTrailer, Value: true})
	}
	return append(h, c.spec.Header...)
}

// checkGrailRead compares a reference scan with what c wrote.
func checkGrailRead(t *testing.T, c rioCase, g grailRead) {
	t.Helper()
	if g.Err != nil || g.TrailErr != nil {
		t.Errorf("seed %d: grailbio scanner: err %v, trailer err %v", c.seed, g.Err, g.TrailErr)
	}
	if d := diffRecords(c.items, g.Items); d != "" {
		t.Errorf("seed %d: grailbio scanner: %s", c.seed, d)
	}
	if !bytes.Equal(g.Trailer, c.spec.Trailer) {
		t.Errorf("seed %d: grailbio trailer: %d bytes, want %d", c.seed, len(g.Trailer), len(c.spec.Trailer))
	}
	if d := entriesEqual(c.wantHeader(), toEntries(g.Header)); d != "" {
		t.Errorf("seed %d: grailbio header vs expected: %s", c.seed, d)
	}
}

// checkRecfsRead compares a recfs scan with the expected items, header and trailer.
func checkRecfsRead(t *testing.T, seed int64, r recfsRioRead, items [][]byte, header []recordio.KeyValue, trailer []byte) {
	t.Helper()
	if r.Err != nil || len(r.Damage) > 0 {
		t.Errorf("seed %d: recfs: err %v, damage %v", seed, r.Err, r.Damage)
	}
	if d := diffRecords(items, r.Items); d != "" {
		t.Errorf("seed %d: recfs: %s", seed, d)
	}
	if !bytes.Equal(r.Trailer, trailer) || (r.Trailer == nil) != (trailer == nil) {
		t.Errorf("seed %d: recfs trailer: %d bytes (nil %v), want %d (nil %v)",
			seed, len(r.Trailer), r.Trailer == nil, len(trailer), trailer == nil)
	}
	if d := entriesEqual(header, r.Header); d != "" {
		t.Errorf("seed %d: recfs header vs expected: %s", seed, d)
	}
}

// TestRecordIORecfsWritesGrailReads: grailbio's v0.0.11 Scanner reads what
// recfs's writer writes (plain, flate, zstd; with and without trailer), and
// the plain output is byte-identical to grailbio's writer's.
func TestRecordIORecfsWritesGrailReads(t *testing.T) {
	eachRioCase(t, 3, func(t *testing.T, seed int64, c rioCase) {
		b, err := recfsWriteRio(c.items, c.spec)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkGrailRead(t, c, readGrailBytes(b, false))
		if len(c.spec.Transformers) == 0 {
			g, err := writeGrail(c.items, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, g) {
				t.Errorf("seed %d: recfs plain output (%d bytes) differs from grailbio's (%d bytes) at byte %d",
					seed, len(b), len(g), firstDiff(b, g))
			}
		}
	})
}

// TestRecordIOGrailWritesRecfsReads: recfs's scanner and reader return
// exactly what grailbio's writer wrote (same variants), with equal header
// entries and trailer and no damage.
func TestRecordIOGrailWritesRecfsReads(t *testing.T) {
	eachRioCase(t, 3, func(t *testing.T, seed int64, c rioCase) {
		b, err := writeGrail(c.items, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := recfsReadRioBytes(b, false)
		if r.Format != codec.RecordIO {
			t.Errorf("seed %d: detected %v", seed, r.Format)
		}
		checkRecfsRead(t, seed, r, c.items, c.wantHeader(), c.spec.Trailer)
	})
}

// TestRecordIOGrailLegacyRecfsReads: recfs reads files of grailbio's legacy
// writers (unpacked, packed, flate-packed) as the reference scanner does.
func TestRecordIOGrailLegacyRecfsReads(t *testing.T) {
	seeds := testSeeds(t, 3)
	writers := []struct {
		name  string
		flate bool
		write func(rng *rand.Rand, items [][]byte) ([]byte, error)
	}{
		{"unpacked", false, func(_ *rand.Rand, items [][]byte) ([]byte, error) { return writeGrailLegacyUnpacked(items) }},
		{"packed", false, func(rng *rand.Rand, items [][]byte) ([]byte, error) {
			return writeGrailLegacyPacked(items, uint32(1+rng.Intn(20)), false)
		}},
		{"packed-flate", true, func(rng *rand.Rand, items [][]byte) ([]byte, error) {
			return writeGrailLegacyPacked(items, uint32(1+rng.Intn(20)), true)
		}},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			for _, seed := range seeds {
				c := newRioCase(seed, nil, false)
				b, err := w.write(rand.New(rand.NewSource(seed)), c.items)
				if err != nil {
					t.Fatal(err)
				}
				g := readGrailBytes(b, w.flate)
				if g.Err != nil || g.Version != recordio.V1 {
					t.Fatalf("seed %d: reference cannot read its legacy file: version %v, %v", seed, g.Version, g.Err)
				}
				if d := diffRecords(c.items, g.Items); d != "" {
					t.Fatalf("seed %d: reference legacy read: %s", seed, d)
				}
				r := recfsReadRioBytes(b, w.flate)
				if r.Format != codec.RecordIOLegacy {
					t.Errorf("seed %d: detected %v", seed, r.Format)
				}
				checkRecfsRead(t, seed, r, c.items, nil, nil)
			}
		})
	}
}

// TestRecordIOAppenderGrailReads: a file written by recfs (each variant) and
// then extended in several sessions through OpenRecordIOAppender is read by
// grailbio's Scanner with every item in order, the header unchanged and the
// trailer intact; recfs reads the same.
func TestRecordIOAppenderGrailReads(t *testing.T) {
	eachRioCase(t, 2, func(t *testing.T, seed int64, c rioCase) {
		rng := rand.New(rand.NewSource(seed))
		cut := rng.Intn(len(c.items) + 1)
		first := c.items[:cut]
		b, err := recfsWriteRio(first, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "append.rio")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rest := c.items[cut:]
		for sessions := 0; len(rest) > 0; sessions++ {
			a, err := openRioAppender(path, rng.Intn(5))
			if err != nil {
				t.Fatalf("seed %d session %d: %v", seed, sessions, err)
			}
			for len(rest) > 0 && rng.Intn(4) != 0 {
				k := min(len(rest), 1+rng.Intn(4))
				if err := a.Append(rest[:k]...); err != nil {
					t.Fatalf("seed %d: Append: %v", seed, err)
				}
				rest = rest[k:]
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		checkGrailRead(t, c, readGrail(f, false))
		f.Close()
		b, err = os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkRecfsRead(t, seed, recfsReadRioBytes(b, false), c.items, c.wantHeader(), c.spec.Trailer)
	})
}
