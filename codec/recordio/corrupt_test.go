package recordio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// fileLayout is a file written by the writer with its block layout as the
// writer reported it (independent of the scanner).
type fileLayout struct {
	data   []byte
	items  [][]byte
	blocks []int64 // start offset of each body block, ascending
	end    []int64 // end offset of each body block
	blkOf  []int   // block index of each item
}

func makeLayout(t testing.TB, rng *rand.Rand, xf []string, n int) fileLayout {
	t.Helper()
	items := codectest.GenItems(rng, n, maxChunkPayload)
	var out bytes.Buffer
	w, err := NewWriter(&out, WriterOptions{MaxItems: 2, Transformers: xf})
	if err != nil {
		t.Fatal(err)
	}
	var l fileLayout
	for _, it := range items {
		loc, err := w.Append(it)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.blocks) == 0 || l.blocks[len(l.blocks)-1] != loc.Block {
			if len(l.blocks) > 0 {
				l.end = append(l.end, loc.Block)
			}
			l.blocks = append(l.blocks, loc.Block)
		}
		l.blkOf = append(l.blkOf, len(l.blocks)-1)
	}
	w.Close()
	l.end = append(l.end, int64(out.Len()))
	l.data, l.items = out.Bytes(), items
	return l
}

// survivors returns the items whose blocks satisfy keep.
func (l fileLayout) survivors(keep func(b int) bool) [][]byte {
	var out [][]byte
	for i, it := range l.items {
		if keep(l.blkOf[i]) {
			out = append(out, it)
		}
	}
	return out
}

// scanLenient scans without strictness, reading every item.
func scanLenient(t *testing.T, data []byte) ([][]byte, []codec.Damage) {
	t.Helper()
	s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	rd, _ := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, s.Transformers(), Options{}, 2)
	items, _ := readItems(t, s, rd)
	if s.Err() != nil {
		t.Fatalf("lenient scan error: %v", s.Err())
	}
	return items, s.Damage()
}

func covers(ds []codec.Damage, off int64) bool {
	for _, d := range ds {
		if off >= d.Off && off < d.Off+d.Len {
			return true
		}
	}
	return false
}

func TestRecordIOCorruption(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	for _, xf := range [][]string{nil, {"zstd"}} {
		l := makeLayout(t, rng, xf, 24)
		if len(l.blocks) < 4 {
			t.Fatalf("only %d blocks", len(l.blocks))
		}
		blockAt := func(off int64) int {
			for b := range l.blocks {
				if off >= l.blocks[b] && off < l.end[b] {
					return b
				}
			}
			return -1
		}
		type mut struct {
			name   string
			off    int64 // damaged byte
			apply  func(d []byte) []byte
			lostOK bool // damage expected (false: padding, nothing lost)
		}
		var muts []mut
		for b := range l.blocks {
			start, end := l.blocks[b], l.end[b]
			payloadByte := start + chunkHeader + int64(rng.Intn(4))
			muts = append(muts,
				mut{"payload", payloadByte, func(d []byte) []byte { d[payloadByte] ^= 0x40; return d }, true},
				mut{"size field", start + 17, func(d []byte) []byte { d[start+17] ^= 1; return d }, true},
				mut{"magic", start + 3, func(d []byte) []byte { d[start+3] ^= 0xff; return d }, true},
				mut{"zero chunk", start, func(d []byte) []byte { clear(d[start : start+chunkSize]); return d }, true},
			)
			if end-start > chunkSize {
				later := start + chunkSize + 2
				muts = append(muts, mut{"later magic", later, func(d []byte) []byte { d[later] ^= 0xff; return d }, true})
			}
			// Padding of the block's last chunk, if it has any.
			last := end - chunkSize
			size := int64(binary.LittleEndian.Uint32(l.data[last+16:]))
			if size < maxChunkPayload {
				pad := last + chunkHeader + size
				muts = append(muts, mut{"padding", pad, func(d []byte) []byte { d[pad] ^= 0xff; return d }, false})
			}
		}
		for _, m := range muts {
			data := m.apply(slices.Clone(l.data))
			got, dmg := scanLenient(t, data)
			bad := blockAt(m.off)
			want := l.survivors(func(b int) bool { return !m.lostOK || b != bad })
			if !equalItems(got, want) {
				t.Errorf("%v %s at %d (block %d): %d items survive, want %d", xf, m.name, m.off, bad, len(got), len(want))
			}
			if m.lostOK != covers(dmg, m.off) || (!m.lostOK && len(dmg) > 0) {
				t.Errorf("%v %s at %d: damage %v", xf, m.name, m.off, dmg)
			}
			// Strict mode stops at the damage with a *CorruptError.
			s, _ := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{Strict: true})
			nStrict := 0
			for s.Next() {
				nStrict++
			}
			var ce *codec.CorruptError
			if m.lostOK {
				if !errors.As(s.Err(), &ce) || !errors.Is(s.Err(), codec.ErrCorrupt) || ce.Off != l.blocks[bad] {
					t.Errorf("%v %s strict: err %v", xf, m.name, s.Err())
				}
				if want := len(l.survivors(func(b int) bool { return b < bad })); nStrict != want {
					t.Errorf("%v %s strict: %d items before the error, want %d", xf, m.name, nStrict, want)
				}
			} else if s.Err() != nil {
				t.Errorf("%v %s strict: %v", xf, m.name, s.Err())
			}
		}
		// Truncation at many points: blocks ending at or before the cut survive.
		for cut := int64(chunkSize); cut <= int64(len(l.data)); cut += 1 + int64(rng.Intn(9000)) {
			got, dmg := scanLenient(t, l.data[:cut])
			want := l.survivors(func(b int) bool { return l.end[b] <= cut })
			if !equalItems(got, want) {
				t.Errorf("%v cut at %d: %d items, want %d", xf, cut, len(got), len(want))
			}
			atBoundary := slices.Contains(l.end, cut) || cut == l.blocks[0]
			if atBoundary != (len(dmg) == 0) {
				t.Errorf("%v cut at %d: damage %v", xf, cut, dmg)
			}
			for _, d := range dmg {
				if !errors.Is(d, codec.ErrTruncated) || d.Off+d.Len != cut {
					t.Errorf("%v cut at %d: damage %v is not truncation up to the cut", xf, cut, d)
				}
			}
		}
		// A chunk of garbage inserted at a block boundary is skipped.
		b := l.blocks[2]
		garbage := make([]byte, chunkSize)
		rng.Read(garbage)
		data := slices.Concat(l.data[:b], garbage, l.data[b:])
		got, dmg := scanLenient(t, data)
		if !equalItems(got, l.items) || len(dmg) != 1 || dmg[0].Off != b || dmg[0].Len != chunkSize {
			t.Errorf("%v inserted chunk: %d items (want %d), damage %v", xf, len(got), len(l.items), dmg)
		}
		// Sub-chunk garbage appended: reported as truncation, nothing lost.
		got, dmg = scanLenient(t, append(slices.Clone(l.data), 1, 2, 3))
		if !equalItems(got, l.items) || len(dmg) != 1 || !errors.Is(dmg[0], codec.ErrTruncated) {
			t.Errorf("%v appended garbage: %d items, damage %v", xf, len(got), dmg)
		}
		// Header damage: a strict scanner cannot open the file; a lenient
		// one returns every item (TestRecordIOLostHeader has the details).
		hd := slices.Clone(l.data)
		hd[30] ^= 1
		if _, err := NewScanner(bytes.NewReader(hd), int64(len(hd)), codec.RecordIO, Options{Strict: true}); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("%v header damage: %v", xf, err)
		}
		if got, dmg := scanLenient(t, hd); !equalItems(got, l.items) || len(dmg) != 1 || dmg[0].Off != 0 {
			t.Errorf("%v header damage, lenient: %d items, damage %v", xf, len(got), dmg)
		}
	}
}

func emptyHeader(t testing.TB, xf []string) []byte {
	return makeRio(t, nil, WriterOptions{Transformers: xf}, nil)
}

func TestRecordIOHostile(t *testing.T) {
	good := codectest.RIOChunk(bodyMagic, 3, 1, 0, []byte{1, 1, 'x'})
	bomb := func(name string) []byte {
		c, err := applyTransformers([]transformer{{name: name, level: -1}}, make([]byte, 8<<20))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	zb, fb := bomb("zstd"), bomb("flate")
	cases := []struct {
		name string
		xf   []string
		body []byte
		kind error
		// verify: only a full decode at scan time (VerifyBlocks) can see
		// this damage; the default header-only scan must stay bounded and
		// return nothing from the block.
		verify bool
	}{
		{"chunk size > 32740", nil, codectest.RIOChunk(bodyMagic, 40000, 1, 0, nil), codec.ErrCorrupt, false},
		{"totalChunks 0", nil, codectest.RIOChunk(bodyMagic, 3, 0, 0, []byte{1, 1, 'x'}), codec.ErrCorrupt, false},
		{"index mismatch", nil, slices.Concat(codectest.RIOChunk(bodyMagic, maxChunkPayload, 2, 0, []byte{1}), codectest.RIOChunk(bodyMagic, 1, 2, 5, nil)), codec.ErrCorrupt, false},
		{"first index 1", nil, codectest.RIOChunk(bodyMagic, 3, 2, 1, []byte{1, 1, 'x'}), codec.ErrCorrupt, false},
		{"total beyond file", nil, codectest.RIOChunk(bodyMagic, 3, 1000000, 0, []byte{1, 1, 'x'}), codec.ErrCorrupt, false},
		{"total beyond file at end", nil, codectest.RIOChunk(bodyMagic, 3, 1000000, 0, []byte{1, 1, 'x'})[:chunkSize], codec.ErrTruncated, false},
		{"huge count varint", nil, codectest.RIOChunk(bodyMagic, 11, 1, 0, bytes.Repeat([]byte{0xff}, 11)), codec.ErrCorrupt, false},
		{"count 2^40", nil, codectest.RIOChunk(bodyMagic, 6, 1, 0, binary.AppendUvarint(nil, 1<<40)), codec.ErrCorrupt, false},
		{"size overflow", nil, codectest.RIOChunk(bodyMagic, 11, 1, 0, binary.AppendUvarint([]byte{1}, 1<<62)), codec.ErrCorrupt, false},
		{"size past block", nil, codectest.RIOChunk(bodyMagic, 3, 1, 0, []byte{1, 9, 'x'}), codec.ErrCorrupt, false},
		{"header magic in body", nil, codectest.RIOChunk(headerMagic, 3, 1, 0, []byte{1, 1, 'x'}), codec.ErrCorrupt, false},
		{"zstd bomb", []string{"zstd"}, codectest.RIOChunk(bodyMagic, uint32(len(zb)), 1, 0, zb), codec.ErrLimit, false},
		{"flate bomb", []string{"flate"}, codectest.RIOChunk(bodyMagic, uint32(len(fb)), 1, 0, fb), codec.ErrLimit, true},
		{"zstd garbage", []string{"zstd"}, codectest.RIOChunk(bodyMagic, 5, 1, 0, []byte{0x28, 0xb5, 0x2f, 0xfd, 9}), codec.ErrCorrupt, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.xf) > 0 && len(zb) > maxChunkPayload {
				t.Fatalf("bomb of %d bytes does not fit a chunk", len(zb))
			}
			chain, _ := parseTransformers(c.xf, false)
			g, _ := applyTransformers(chain, []byte{1, 1, 'x'})
			tail := codectest.RIOChunk(bodyMagic, uint32(len(g)), 1, 0, g)
			if c.kind == codec.ErrTruncated {
				tail = nil
			}
			data := slices.Concat(emptyHeader(t, c.xf), c.body, tail)
			if c.verify {
				s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{MaxBlockSize: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for s.Next() {
					n++
				}
				if n != 1 {
					t.Fatalf("header-only scan: %d items, want only the good block's 1", n)
				}
			}
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{MaxBlockSize: 1 << 20, VerifyBlocks: c.verify})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for s.Next() {
				n++
			}
			runtime.ReadMemStats(&ms1)
			if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > 8<<20 {
				t.Errorf("scan allocated %d bytes", alloc)
			}
			d := s.Damage()
			if len(d) == 0 || !errors.Is(d[0], c.kind) || d[0].Off != chunkSize {
				t.Fatalf("damage %v, want %v at %d", d, c.kind, chunkSize)
			}
			if c.kind != codec.ErrTruncated && (n != 1 || len(d) != 1) {
				t.Errorf("resync: %d items after the bad block (want 1), damage %v", n, d)
			}
		})
	}
	// A trailer block ends the data even with bytes after it.
	data := slices.Concat(emptyHeader(t, nil), good, codectest.RIOChunk(trailerMagic, 2, 1, 0, []byte{1, 0}), good)
	items, dmg := scanLenient(t, data)
	if len(items) != 1 || len(dmg) != 0 {
		t.Errorf("data after trailer: %d items, damage %v", len(items), dmg)
	}
	// Tiny files.
	for _, n := range []int{1, 7, 100} {
		b := slices.Clone(headerMagic[:])
		b = append(b, make([]byte, n)...)[:n]
		if _, err := NewScanner(bytes.NewReader(b), int64(n), codec.RecordIO, Options{}); err == nil {
			t.Errorf("%d-byte file opened", n)
		}
	}
	if s, err := NewScanner(bytes.NewReader(nil), 0, codec.Unknown, Options{}); err != nil || s.Next() {
		t.Errorf("0-byte file: %v", err)
	}
	// An unknown transformer is unsupported.
	var out bytes.Buffer
	w, _ := NewWriter(&out, WriterOptions{Header: []HeaderEntry{{HeaderKeyTransformer, "lz4"}}})
	w.Close()
	if _, err := NewScanner(bytes.NewReader(out.Bytes()), int64(out.Len()), codec.Unknown, Options{}); !errors.Is(err, codec.ErrUnsupported) {
		t.Errorf("unknown transformer: %v", err)
	}
}
