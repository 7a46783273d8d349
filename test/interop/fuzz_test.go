package interop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
)

// splitFuzz cuts data into records: each record takes a 2-byte length
// prefix (scaled so that block-sized records are reachable), then that many
// bytes, padded from a pattern when data runs out. At most 64 records.
func splitFuzz(data []byte) [][]byte {
	var recs [][]byte
	for len(data) >= 2 && len(recs) < 64 {
		n := int(binary.LittleEndian.Uint16(data))
		data = data[2:]
		if n&1 == 1 { // odd: a big record around block sizes
			n = (n >> 1) * 3
		} else {
			n >>= 4
		}
		r := make([]byte, n)
		k := copy(r, data)
		data = data[k:]
		for i := k; i < n; i++ {
			r[i] = byte(i*31 + len(recs))
		}
		recs = append(recs, r)
	}
	return recs
}

// FuzzLeveldbWriterIdentity: for any record sequence, recfs's LogWriter
// output is byte-identical to goleveldb's, and goleveldb, pebble and recfs
// all read the records back exactly.
func FuzzLeveldbWriterIdentity(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xf1, 0xff, 0x10, 0x00, 'a', 'b'})
	f.Add(binary.LittleEndian.AppendUint16(nil, uint16((32761/3)<<1|1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := splitFuzz(data)
		got, want := mustRecfsLog(t, recs, false), mustGoleveldb(t, recs)
		if !bytes.Equal(got, want) {
			t.Fatalf("recfs output differs from goleveldb's at byte %d", firstDiff(got, want))
		}
		checkReferenceReadsLog(t, 0, "recfs", got, recs)
		rd := recfsReadLog(got, nil)
		if d := diffRecords(recs, rd.Recs); d != "" || rd.Err != nil || len(rd.Damage) > 0 {
			t.Fatalf("recfs read back: %s, err %v, damage %v", d, rd.Err, rd.Damage)
		}
	})
}

// FuzzRecordIOWriterIdentity: for any item sequence and MaxItems, recfs's
// plain recordio output is byte-identical to grailbio's writer's and
// grailbio's scanner reads it back exactly.
func FuzzRecordIOWriterIdentity(f *testing.F) {
	f.Add([]byte{}, uint8(0), false)
	f.Add([]byte{0, 0, 2, 0, 'x', 'y'}, uint8(1), true)
	f.Add(binary.LittleEndian.AppendUint16(nil, uint16((32740/3)<<1|1)), uint8(3), true)
	f.Fuzz(func(t *testing.T, data []byte, maxItems uint8, trailer bool) {
		items := splitFuzz(data)
		c := rioCase{items: items, spec: rioSpec{MaxItems: uint32(maxItems % 8)}}
		if trailer {
			c.spec.Trailer = append([]byte("t"), data...)
		}
		got, err := recfsWriteRio(items, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		want, err := writeGrail(items, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("recfs output (%d bytes) differs from grailbio's (%d bytes) at byte %d", len(got), len(want), firstDiff(got, want))
		}
		checkGrailRead(t, c, readGrailBytes(got, false))
	})
}

// FuzzLeveldbDifferential: on arbitrary bytes, whenever goleveldb (checksums
// on) reads a file to EOF with no drop report, recfs returns the same records
// and no damage other than a truncation that reaches the end of the file
// (goleveldb ends silently on a torn header, recfs reports it, spec 6.8).
// recfs never panics either way. (pebble is left out: on
// corrupt input it spends about a second building errors.)
func FuzzLeveldbDifferential(f *testing.F) {
	seedLog, _ := writeGoleveldb([][]byte{payload(0, 10), payload(1, 300), {}})
	f.Add(seedLog)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := recfsReadLog(data, nil)
		gr, drops, err := readGoleveldb(data)
		if err != nil || len(drops) > 0 {
			return
		}
		tornTail := true
		for _, d := range rd.Damage {
			tornTail = tornTail && errors.Is(d, codec.ErrTruncated) && d.Off+d.Len == int64(len(data))
		}
		if d := diffRecords(gr, rd.Recs); d != "" || rd.Err != nil || !tornTail {
			t.Fatalf("goleveldb reads %d records cleanly; recfs: %s, err %v, damage %v", len(gr), d, rd.Err, rd.Damage)
		}
	})
}

// rioFuzzBases are valid recordio files the differential fuzzer patches:
// the fuzzer's input is a small edit script, since whole recordio files
// (32 KiB chunks) are too big for the fuzzing engine to mutate quickly.
// It is built on first use: package variables initialise before the init
// that registers the transformers.
var rioFuzzBases = sync.OnceValue(func() [][]byte {
	var out [][]byte
	for _, s := range []rioSpec{
		{Trailer: []byte("tr"), MaxItems: 1},
		{Transformers: []string{"flate"}},
		// No zstd base: grailbio's cgo zstd allocates whatever a patched
		// frame header declares, which stalls the fuzzing workers.
		{Transformers: []string{"flate"}, Trailer: []byte("zz"), MaxItems: 2},
	} {
		b, err := writeGrail([][]byte{[]byte("a"), {}, payload(2, 40000), []byte("tail")}, s)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
})

// patchRio applies an edit script to a copy of base: byte 0 picks the base,
// bytes 1-3 (if set) cut the file to that length, then each 4-byte group
// writes one byte at a 3-byte offset.
func patchRio(script []byte) []byte {
	if len(script) == 0 {
		return nil
	}
	bases := rioFuzzBases()
	d := bytes.Clone(bases[int(script[0])%len(bases)])
	script = script[1:]
	if len(script) >= 3 {
		if cut := int(script[0]) | int(script[1])<<8 | int(script[2])<<16; cut != 0 && cut < len(d) {
			d = d[:cut]
		}
		script = script[3:]
	}
	for ; len(script) >= 4 && len(d) > 0; script = script[4:] {
		off := (int(script[0]) | int(script[1])<<8 | int(script[2])<<16) % len(d)
		d[off] = script[3]
	}
	return d
}

// FuzzRecordIODifferential: on patched recordio files, whenever grailbio's
// scanner reads the whole file (and its trailer) without error, recfs returns
// the same items. recfs never panics either way.
func FuzzRecordIODifferential(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 0, 0, 0x10, 0x80, 0, 0xff})
	f.Add([]byte{2, 0x00, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, script []byte) {
		data := patchRio(script)
		r := recfsReadRioBytes(data, false)
		g := readGrailBytes(data, false)
		if g.Err != nil || g.TrailErr != nil || len(g.Items) == 0 {
			return
		}
		if d := diffRecords(g.Items, r.Items); d != "" {
			t.Fatalf("grailbio reads %d items cleanly; recfs: %s (err %v, damage %v)", len(g.Items), d, r.Err, r.Damage)
		}
	})
}
