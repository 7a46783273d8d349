package etcdwal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestRoundTrip: every record comes back as its walpb.Record bytes, with
// the chain verified, in preallocated and plain files, whatever the seed.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seed     uint32
		n, size  int
		prealloc int
	}{
		{0, 0, 0, 0},
		{0, 10, 100, 1 << 20},
		{0xdeadbeef, 50, 7, 0},
		{12345, 3, 200000, 4096},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			t.Parallel()
			b, want := walFile(t, tc.seed, entries(tc.n, tc.size), tc.prealloc)
			got, recs, dmg, err := scanAll(t, b, Options{Strict: true})
			if err != nil || len(dmg) > 0 {
				t.Fatalf("scan: %v %v", err, dmg)
			}
			codectest.SamePayloads(t, "", got, want)
			for i := range want {
				if recs[i].Off%8 != 0 {
					t.Fatalf("record %d at unaligned %d", i, recs[i].Off)
				}
			}
			// Piecewise reads agree.
			last := recs[len(recs)-1]
			piece := max(3, last.Len/7)
			p := make([]byte, piece)
			var out []byte
			for off := int64(0); ; off += piece {
				n, err := ReadRecord(bytes.NewReader(b), last, p, off)
				out = append(out, p[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out, want[len(want)-1]) {
				t.Fatal("piecewise read differs")
			}
		})
	}
}

// TestDamage: a record whose data is corrupt costs that record only; an
// unparsable frame is skipped to where two frames chain again; a zero run
// with records after it is damage; a torn last write is of the truncation
// kind; a read of a record whose bytes changed fails.
func TestDamage(t *testing.T) {
	t.Parallel()
	clean, want := walFile(t, 7, entries(30, 50), 64<<10)
	_, recs, _, _ := scanAll(t, clean, Options{})
	k := 12 // a record in the middle
	cases := []struct {
		name string
		edit func(b []byte) []byte
		lost []int // records lost
		kind codec.DamageKind
		err  error
	}{
		{"data", func(b []byte) []byte { b[recs[k].End()-recs[k].End()%8-12] ^= 1; return b },
			[]int{k}, codec.DamageChecksum, codec.ErrCorrupt},
		{"length field", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[recs[k].Off:], 1<<40)
			return b
		}, []int{k, k + 1}, codec.DamageLength, codec.ErrCorrupt},
		{"zero gap", func(b []byte) []byte {
			copy(b[recs[k].Off:recs[k+2].Off], make([]byte, recs[k+2].Off-recs[k].Off))
			return b
		}, []int{k, k + 1, k + 2}, codec.DamageZeroHeader, codec.ErrCorrupt},
		{"torn last write", func(b []byte) []byte {
			last := recs[len(recs)-1]
			copy(b[last.Off+20:last.End()], make([]byte, last.End()-last.Off-20))
			return b
		}, []int{len(recs) - 1}, codec.DamageTruncChunk, codec.ErrTruncated},
		{"file cut in a record", func(b []byte) []byte { return b[:recs[len(recs)-1].Off+13] },
			[]int{len(recs) - 1}, codec.DamageTruncChunk, codec.ErrTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.edit(append([]byte(nil), clean...))
			got, _, dmg, err := scanAll(t, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var keep [][]byte
			for i, w := range want {
				lost := false
				for _, l := range tc.lost {
					lost = lost || l == i
				}
				if !lost {
					keep = append(keep, w)
				}
			}
			codectest.SamePayloads(t, fmt.Sprint("damage ", dmg), got, keep)
			if len(dmg) != 1 || dmg[0].Kind != tc.kind || !errors.Is(dmg[0], tc.err) || dmg[0].Off != recs[tc.lost[0]].Off {
				t.Fatalf("damage %v, want one of kind %v (%v) at %d", dmg, tc.kind, tc.err, recs[tc.lost[0]].Off)
			}
		})
	}
	// A read through a location whose bytes changed since the scan fails.
	b := append([]byte(nil), clean...)
	b[recs[k].End()-recs[k].End()%8-12] ^= 1
	if _, err := Read(bytes.NewReader(b), recs[k], nil); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("read of a changed record: %v", err)
	}
}

// TestStrict: a strict scan stops at the first damage with a
// *codec.CorruptError of this format.
func TestStrict(t *testing.T) {
	t.Parallel()
	b, _ := walFile(t, 0, entries(5, 10), 0)
	_, recs, _, _ := scanAll(t, b, Options{})
	b[recs[3].Off+frameHeader+recs[3].Len-1] ^= 0x55
	_, _, _, err := scanAll(t, b, Options{Strict: true})
	var ce *codec.CorruptError
	if !errors.As(err, &ce) || ce.Format != codec.EtcdWAL {
		t.Fatalf("strict scan: %v", err)
	}
}

// TestProbe: WAL files are recognised from their first two records; other
// bytes are not.
func TestProbe(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint32{0, 99} {
		b, _ := walFile(t, seed, entries(2, 10), 1000)
		if !Probe(bytes.NewReader(b), int64(len(b))) {
			t.Errorf("seed %d: not recognised", seed)
		}
	}
	only, _ := walFile(t, 0, nil, 1000)
	if !Probe(bytes.NewReader(only), int64(len(only))) {
		t.Error("a file holding only its crc record not recognised")
	}
	broken, _ := walFile(t, 0, entries(2, 10), 0)
	_, recs, _, _ := scanAll(t, broken, Options{})
	broken[recs[1].Off+frameHeader+recs[1].Len-1] ^= 1
	for name, b := range map[string][]byte{
		"empty":        nil,
		"zeros":        make([]byte, 4096),
		"text":         []byte("just some text that is long enough to be read as frames"),
		"broken chain": broken[:64],
	} {
		if Probe(bytes.NewReader(b), int64(len(b))) {
			t.Errorf("%s taken for a WAL file", name)
		}
	}
}

// TestParseRecord: fields in any order and unknown fields are accepted as
// etcd's decoder accepts them; bytes that are not protobuf are not.
func TestParseRecord(t *testing.T) {
	t.Parallel()
	std := AppendRecord(nil, WALRecord{Type: 2, CRC: 77, Data: []byte("x")})
	reordered := []byte{0x1a, 1, 'x', 0x10, 77, 0x08, 2, 0x28, 5}
	for _, b := range [][]byte{std, reordered} {
		r, err := ParseRecord(b)
		if err != nil || r.Type != 2 || r.CRC != 77 || string(r.Data) != "x" {
			t.Fatalf("parse %x: %+v %v", b, r, err)
		}
	}
	if !canonical(std) || canonical(reordered) {
		t.Fatal("canonical: wrong")
	}
	for _, b := range [][]byte{{0x10, 1}, {0x08}, {0x1a, 5, 'x'}, {0xff}} {
		if _, err := ParseRecord(b); err == nil {
			t.Fatalf("parse %x: no error", b)
		}
	}
}
