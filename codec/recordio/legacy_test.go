package recordio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
)

// legacyRecord builds one legacy record (spec 13) for tests.
func legacyRecord(magic [8]byte, payload []byte) []byte {
	return AppendLegacyRecord(nil, magic, payload)
}

// legacyPackedPayload builds a packed payload; flate compresses the data.
func legacyPackedPayload(t testing.TB, items [][]byte, flate bool) []byte {
	hdr := binary.AppendUvarint(nil, uint64(len(items)))
	var data []byte
	for _, it := range items {
		hdr = binary.AppendUvarint(hdr, uint64(len(it)))
		data = append(data, it...)
	}
	if flate {
		var err error
		if data, err = flateCompress(data, -1); err != nil {
			t.Fatal(err)
		}
	}
	p := binary.LittleEndian.AppendUint32(nil, crcIEEE(hdr))
	return slices.Concat(p, hdr, data)
}

// TestAppendLegacyPacked: what AppendLegacyPacked writes scans back as
// its items, perRecord of them a record.
func TestAppendLegacyPacked(t *testing.T) {
	t.Parallel()
	items := [][]byte{[]byte("a"), nil, []byte("bc"), []byte("def"), []byte("g")}
	data := AppendLegacyPacked(nil, items, 2)
	if want := slices.Concat(legacyRecord(bodyMagic, legacyPackedPayload(t, items[:2], false)),
		legacyRecord(bodyMagic, legacyPackedPayload(t, items[2:4], false)),
		legacyRecord(bodyMagic, legacyPackedPayload(t, items[4:], false))); !slices.Equal(data, want) {
		t.Fatalf("encoded % x\nwant    % x", data, want)
	}
	got, damage, _ := scanLegacy(t, data, Options{})
	if len(damage) != 0 || len(got) != len(items) {
		t.Fatalf("scanned %d items, damage %v", len(got), damage)
	}
	for i := range items {
		if !slices.Equal(got[i], items[i]) {
			t.Errorf("item %d: %q, want %q", i, got[i], items[i])
		}
	}
}

// legacyFile is a generated legacy file with its record layout.
type legacyFile struct {
	data    []byte
	items   [][]byte
	recOf   []int
	recs    []int64 // record offsets
	recEnds []int64
}

func makeLegacy(t testing.TB, rng *rand.Rand, flate bool) legacyFile {
	var f legacyFile
	for r := 0; r < 8; r++ {
		var items [][]byte
		var rec []byte
		if r%3 == 0 && !flate {
			it := make([]byte, rng.Intn(300))
			rng.Read(it)
			items = [][]byte{it}
			rec = legacyRecord(unpackedMagic, it)
		} else {
			for i := 0; i < 1+rng.Intn(4); i++ {
				it := bytes.Repeat([]byte{byte('a' + i)}, rng.Intn(200))
				items = append(items, it)
			}
			rec = legacyRecord(bodyMagic, legacyPackedPayload(t, items, flate))
		}
		f.recs = append(f.recs, int64(len(f.data)))
		f.data = append(f.data, rec...)
		f.recEnds = append(f.recEnds, int64(len(f.data)))
		for _, it := range items {
			f.items = append(f.items, it)
			f.recOf = append(f.recOf, r)
		}
	}
	return f
}

func scanLegacy(t *testing.T, data []byte, o Options) ([][]byte, []codec.Damage, []ItemLoc) {
	t.Helper()
	s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIOLegacy, o)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIOLegacy, nil, o, 2)
	if err != nil {
		t.Fatal(err)
	}
	items, locs := readItems(t, s, rd)
	return items, s.Damage(), locs
}

func TestRecordIOLegacy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(5))
	for _, fl := range []bool{false, true} {
		o := Options{}
		if fl {
			o.LegacyTransform = "flate"
		}
		f := makeLegacy(t, rng, fl)
		got, dmg, locs := scanLegacy(t, f.data, o)
		if !equalItems(got, f.items) || len(dmg) != 0 {
			t.Fatalf("flate=%v clean: %d items (want %d), damage %v", fl, len(got), len(f.items), dmg)
		}
		for i, l := range locs {
			if l.Block != f.recs[f.recOf[i]] {
				t.Fatalf("item %d in record at %d, want %d", i, l.Block, f.recs[f.recOf[i]])
			}
		}
		// Damage a record header byte (magic, length or length CRC): that
		// record is lost, resync finds the next one.
		for r := range f.recs {
			for _, at := range []int64{0, 9, 17} {
				data := slices.Clone(f.data)
				data[f.recs[r]+at] ^= 0x21
				got, dmg, _ := scanLegacy(t, data, o)
				var want [][]byte
				for i, it := range f.items {
					if f.recOf[i] != r {
						want = append(want, it)
					}
				}
				if !equalItems(got, want) || !covers(dmg, f.recs[r]+at) {
					t.Errorf("flate=%v record %d byte %d: %d items (want %d), damage %v", fl, r, at, len(got), len(want), dmg)
				}
			}
		}
		// Truncation keeps whole records before the cut.
		for cut := int64(1); cut < int64(len(f.data)); cut += 1 + int64(rng.Intn(40)) {
			got, dmg, _ := scanLegacy(t, f.data[:cut], o)
			var want [][]byte
			for i, it := range f.items {
				if f.recEnds[f.recOf[i]] <= cut {
					want = append(want, it)
				}
			}
			if !equalItems(got, want) {
				t.Errorf("flate=%v cut %d: %d items, want %d", fl, cut, len(got), len(want))
			}
			if !slices.Contains(f.recEnds, cut) && (len(dmg) != 1 || !errors.Is(dmg[0], codec.ErrTruncated)) {
				t.Errorf("flate=%v cut %d: damage %v", fl, cut, dmg)
			}
		}
	}
}

func TestRecordIOLegacyHostile(t *testing.T) {
	t.Parallel()
	okRec := legacyRecord(unpackedMagic, []byte("ok"))
	huge := slices.Clone(unpackedMagic[:])
	huge = binary.LittleEndian.AppendUint64(huge, 1<<63)
	huge = binary.LittleEndian.AppendUint32(huge, crcIEEE(huge[8:16]))
	badCRC := legacyRecord(bodyMagic, []byte{0, 0, 0, 0, 1, 2, 'a', 'b'})
	k0 := legacyRecord(bodyMagic, legacyPackedPayload(t, nil, false))
	over := legacyRecord(bodyMagic, legacyPackedPayload(t, [][]byte{[]byte("abc")}, false)[:6])
	bigK := binary.AppendUvarint(nil, 1<<40)
	bigKRec := legacyRecord(bodyMagic, slices.Concat(binary.LittleEndian.AppendUint32(nil, crcIEEE(bigK)), bigK))
	bomb, _ := flateCompress(make([]byte, 4<<20), 1)
	bombHdr := binary.AppendUvarint(binary.AppendUvarint(nil, 1), 10)
	bombRec := legacyRecord(bodyMagic, slices.Concat(binary.LittleEndian.AppendUint32(nil, crcIEEE(bombHdr)), bombHdr, bomb))
	cases := []struct {
		name  string
		data  []byte
		o     Options
		items int
		kind  error
	}{
		{"length 2^63", slices.Concat(huge, okRec), Options{}, 1, codec.ErrCorrupt},
		{"packed crc", slices.Concat(badCRC, okRec), Options{}, 1, codec.ErrCorrupt},
		{"K=0 quirk", slices.Concat(k0, okRec), Options{}, 2, nil},
		{"sizes past data", slices.Concat(over, okRec), Options{}, 1, codec.ErrCorrupt},
		{"count 2^40", slices.Concat(bigKRec, okRec), Options{}, 1, codec.ErrCorrupt},
		{"flate bomb", slices.Concat(bombRec, okRec), Options{LegacyTransform: "flate", MaxBlockSize: 1 << 20}, 1, codec.ErrLimit},
		{"garbage", slices.Concat([]byte("garbage!garbage!garbage!"), okRec), Options{}, 1, codec.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, dmg, _ := scanLegacy(t, c.data, c.o)
			if len(got) != c.items {
				t.Errorf("%d items, want %d", len(got), c.items)
			}
			if c.kind == nil {
				if len(dmg) != 0 {
					t.Errorf("damage %v", dmg)
				}
				return
			}
			if len(dmg) != 1 || !errors.Is(dmg[0], c.kind) || dmg[0].Off != 0 {
				t.Errorf("damage %v, want one %v at 0", dmg, c.kind)
			}
		})
	}
}
