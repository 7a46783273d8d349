package wlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestDamage: each kind of damage costs the records it touches and the rest
// of its page, is reported with its kind, range and class, and the scan
// goes on at the next page.
func TestDamage(t *testing.T) {
	t.Parallel()
	// 12 records of 5000 bytes: about 6.5 per page, record 6 crosses into
	// page 1 and record 13 would cross into page 2.
	recs := codecRecords(12, 5000)
	clean := segment(t, recs, None, false)
	_, locs, _, _ := scanAll(t, clean, Options{})
	inPage := func(p int64) (n int) {
		for _, l := range locs {
			if l.Off/PageSize == p && l.End() <= (p+1)*PageSize {
				n++
			}
		}
		return n
	}
	cases := []struct {
		name   string
		edit   func(b []byte) []byte
		lost   int // records lost
		kind   codec.DamageKind
		err    error
		dmgOff int64
	}{
		{"checksum", func(b []byte) []byte { b[locs[2].Off+HeaderSize+10] ^= 1; return b },
			// Records 2.. of page 0 and the one crossing into page 1.
			inPage(0) - 2 + 1, codec.DamageChecksum, codec.ErrCorrupt, locs[2].Off},
		{"length past the page", func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[locs[1].Off+1:], PageSize-10)
			return b
		}, inPage(0) - 1 + 1, codec.DamageLength, codec.ErrCorrupt, locs[1].Off},
		{"unknown type", func(b []byte) []byte { b[locs[3].Off] = 6; return b },
			1, codec.DamageType, codec.ErrCorrupt, locs[3].Off},
		{"reserved flag", func(b []byte) []byte { b[locs[3].Off] |= 0x40; return b },
			1, codec.DamageType, codec.ErrCorrupt, locs[3].Off},
		{"garbage after padding", func(b []byte) []byte {
			b[locs[0].Off] = 0
			return b
		}, inPage(0) + 1, codec.DamageZeroHeader, codec.ErrCorrupt, 0},
		{"torn last page", func(b []byte) []byte { return b[:len(b)-100] },
			1, codec.DamageTruncChunk, codec.ErrTruncated, locs[11].Off},
		{"torn header", func(b []byte) []byte { return b[:locs[11].Off+3] },
			1, codec.DamageTruncHdr, codec.ErrTruncated, locs[11].Off},
		{"record cut at the end", func(b []byte) []byte {
			// The live end while a record crossing pages is written: its
			// FIRST is there, its LAST not yet.
			return b[:PageSize]
		}, len(recs) - inPage(0), codec.DamageCutShort, codec.ErrTruncated, locs[inPage(0)].Off},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.edit(append([]byte(nil), clean...))
			got, _, dmg, err := scanAll(t, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(recs)-tc.lost {
				t.Fatalf("%d records, want %d (damage %v)", len(got), len(recs)-tc.lost, dmg)
			}
			kept := 0
			for _, g := range got {
				for kept < len(recs) && !bytes.Equal(g, recs[kept]) {
					kept++
				}
				if kept == len(recs) {
					t.Fatal("a record came back that was not written, or out of order")
				}
			}
			var found bool
			for _, d := range dmg {
				if d.Kind == tc.kind && errors.Is(d, tc.err) && (tc.dmgOff < 0 || d.Off == tc.dmgOff) && d.Len > 0 {
					found = true
				}
			}
			if !found {
				t.Fatalf("damage %v: none of kind %v (%v) at %d", dmg, tc.kind, tc.err, tc.dmgOff)
			}
		})
	}
}

// TestOrphan: a MIDDLE fragment that continues no record is an orphan; a
// FIRST followed by another record start is a record cut short.
func TestOrphan(t *testing.T) {
	t.Parallel()
	big := sized(2*PageSize, 9)
	b := segment(t, [][]byte{{1}, big, {2}}, None, false)
	_, locs, _, _ := scanAll(t, b, Options{})
	// Turn the big record's FIRST into padding's garbage twin: type 3
	// (MIDDLE) makes it an orphan, and its own MIDDLE and LAST orphans.
	edited := append([]byte(nil), b...)
	first := locs[1].Off
	edited[first] = kindMiddle
	got, _, dmg, _ := scanAll(t, edited, Options{})
	if len(got) != 2 || dmg[0].Kind != codec.DamageOrphan || dmg[0].Off != first {
		t.Fatalf("orphaned record: %d records, damage %v", len(got), dmg)
	}
	// A FULL where the big record's MIDDLE was: the big record is cut
	// short, the FULL is a record.
	edited = append([]byte(nil), b...)
	f1, _ := FragmentAt(locs[1], 1)
	rewriteFragment(edited, f1.Off, kindFull)
	got, _, dmg, _ = scanAll(t, edited, Options{})
	if len(got) != 3 || dmg[0].Kind != codec.DamageCutShort || dmg[0].Off != first || errors.Is(dmg[0], codec.ErrTruncated) {
		t.Fatalf("record cut short: %d records, damage %v", len(got), dmg)
	}
}

// rewriteFragment sets the type of the fragment at off and fixes nothing
// else (the checksum covers data only).
func rewriteFragment(b []byte, off int64, typ byte) { b[off] = typ }

// TestCompressionBombs: a compressed record that claims to decompress past
// the limit is damage of kind ErrLimit at scan time, never a read of that
// size; one whose bytes do not decode is a read error, not a panic.
func TestCompressionBombs(t *testing.T) {
	t.Parallel()
	// A snappy block header claiming 4 GiB.
	claim := binary.AppendUvarint(nil, 1<<32-1)
	claim = append(claim, 0, 0, 0)
	for _, tc := range []struct {
		name   string
		stored []byte
		comp   Compression
		err    error
	}{
		{"snappy claims 4 GiB", claim, Snappy, codec.ErrLimit},
		{"snappy bad header", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, Snappy, codec.ErrCorrupt},
		{"zstd bad header", []byte("not zstd at all"), Zstd, codec.ErrCorrupt},
		{"zstd claims 1 GiB", zstdFrameClaiming(1 << 30), Zstd, codec.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rawSegment(tc.stored, tc.comp)
			got, _, dmg, err := scanAll(t, b, Options{})
			if err != nil || len(got) != 0 || len(dmg) != 1 || !errors.Is(dmg[0], tc.err) {
				t.Fatalf("%d records, damage %v, %v; want one damage of %v", len(got), dmg, err, tc.err)
			}
		})
	}
	// A snappy block whose header is fine but whose body is garbage.
	bad := append(binary.AppendUvarint(nil, 100), 0xff, 0xff, 0xff)
	b := rawSegment(bad, Snappy)
	sc := NewScanner(bytes.NewReader(b), int64(len(b)), Options{})
	if !sc.Next() {
		t.Fatalf("no record: %v", sc.Damage())
	}
	if _, err := Decode(bytes.NewReader(b), sc.Record(), nil, Options{}); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("decode of a bad snappy body: %v", err)
	}
}

// rawSegment frames stored as one FULL fragment flagged comp.
func rawSegment(stored []byte, comp Compression) []byte {
	h := make([]byte, HeaderSize)
	h[0] = kindFull | comp.flag()
	binary.BigEndian.PutUint16(h[1:], uint16(len(stored)))
	binary.BigEndian.PutUint32(h[3:], codec.CRC32C(stored))
	return append(h, stored...)
}

// zstdFrameClaiming returns a zstd frame header (and an empty raw last
// block) whose content size field says n bytes.
func zstdFrameClaiming(n uint64) []byte {
	// Magic, frame header descriptor: FCS field 8 bytes (flag 3), single
	// segment.
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}
	b = binary.LittleEndian.AppendUint64(b, n)
	return append(b, 0x01, 0x00, 0x00) // last raw block of 0 bytes
}

// slicer is a ByteSlicer over b.
type slicer struct {
	*bytes.Reader
	b []byte
}

func (s slicer) Slice(off, n int64) ([]byte, error) { return s.b[off : off+n], nil }

// scanProcs scans r as scanAll does with checks ahead on procs
// processors, returning the records' locations and the damage.
func scanProcs(r io.ReaderAt, size int64, procs int) ([]Record, []codec.Damage, error) {
	sc := NewScanner(r, size, Options{})
	sc.procs = procs
	var recs []Record
	for sc.Next() {
		rec := sc.Record()
		rec.Frags = append([]Fragment(nil), rec.Frags...)
		recs = append(recs, rec)
	}
	return recs, sc.Damage(), sc.Err()
}

// TestCheckAhead: checking pages' checksums ahead on several processors
// finds the same records and the same damage as checking each fragment in
// turn, in windows read or sliced, whatever byte of the segment is
// damaged (a checksum, a length, a type, data, padding).
func TestCheckAhead(t *testing.T) {
	t.Parallel()
	var recs [][]byte
	for i := range 400 {
		recs = append(recs, noisy(200+i*37%9000, uint32(i)))
	}
	for _, c := range []Compression{None, Snappy} {
		clean := segment(t, recs, c, false)
		if len(clean) < 40*PageSize {
			t.Fatalf("segment of %d bytes: too short to share", len(clean))
		}
		rng := rand.New(rand.NewPCG(1, uint64(c)))
		for i := range 300 {
			b := bytes.Clone(clean)
			if i > 0 {
				off := rng.IntN(len(b))
				if i%3 == 0 {
					off -= off % PageSize // a header at a page start
				}
				b[off] ^= byte(1 + rng.IntN(255))
			}
			for _, r := range []io.ReaderAt{bytes.NewReader(b), slicer{bytes.NewReader(b), b}} {
				wantRecs, wantDmg, wantErr := scanProcs(r, int64(len(b)), 1)
				gotRecs, gotDmg, gotErr := scanProcs(r, int64(len(b)), 4)
				if !reflect.DeepEqual(gotRecs, wantRecs) || !reflect.DeepEqual(gotDmg, wantDmg) || gotErr != wantErr {
					t.Fatalf("%v, edit %d, %T: ahead %d records, damage %v, %v; in turn %d, %v, %v",
						c, i, r, len(gotRecs), gotDmg, gotErr, len(wantRecs), wantDmg, wantErr)
				}
				if i == 0 && (len(gotRecs) != len(recs) || len(gotDmg) > 0) {
					t.Fatalf("clean %v segment: %d records, damage %v", c, len(gotRecs), gotDmg)
				}
			}
		}
	}
}
